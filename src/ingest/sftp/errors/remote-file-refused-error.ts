import { RelayError } from "../../../errors/relay-error.js";

/**
 * The SFTP server answered an operation on one file with a failure (an SFTP status: no such file,
 * permission denied, failure): that file waits for the next pass, and the source's other files go on.
 */
export class RemoteFileRefusedError extends RelayError {
  readonly code = "SFTP_FILE_REFUSED";

  constructor(
    readonly operation: string,
    readonly path: string,
    readonly answer: string,
  ) {
    super(`the server refused to ${operation} ${path}: ${answer}`);
  }
}
