import { RelayError } from "../../../errors/relay-error.js";

/**
 * The SFTP server offered a host key that known_hosts marks `@revoked`: refused before anything is sent,
 * as OpenSSH refuses it ("REVOKED HOST KEY DETECTED"), even where another line pins the same key.
 */
export class HostKeyRevokedError extends RelayError {
  readonly code = "SFTP_HOST_KEY_REVOKED";

  constructor(
    readonly source: string,
    readonly server: string,
    readonly offered: string,
    readonly where: string,
  ) {
    super(
      `SFTP source ${source}: REVOKED HOST KEY: ${server} offered host key ${offered}, which ${where} ` +
        "marks @revoked; the connection was refused. Ask the server's operator for its current key and " +
        "pin that one",
    );
  }
}
