import { RelayError } from "../../../errors/relay-error.js";

/**
 * A file on the SFTP server read as other bytes at each of two takes while its size and modification
 * time stayed the same: the server makes it anew as it is read. Nothing of it is kept; it stays where it
 * is, named at each pass, until it reads the same twice.
 */
export class RemoteFileUnstableError extends RelayError {
  readonly code = "SFTP_FILE_UNSTABLE";

  constructor(readonly path: string) {
    super(
      `${path} reads as other bytes at each read while its size and time stay the same; ` +
        "nothing of it is taken. Ask the partner to fix how the file is written",
    );
  }
}
