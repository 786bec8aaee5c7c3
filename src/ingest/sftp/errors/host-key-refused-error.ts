import { RelayError } from "../../../errors/relay-error.js";

/** The SFTP server offered a host key other than the one pinned: nothing is sent to it or taken from it. */
export class HostKeyRefusedError extends RelayError {
  readonly code = "SFTP_HOST_KEY_REFUSED";

  constructor(
    readonly source: string,
    readonly server: string,
    readonly expected: string,
    readonly offered: string,
  ) {
    super(
      `SFTP source ${source}: ${server} offered host key ${offered}, but ${expected} is pinned; ` +
        "the connection was refused. If the server's key really changed, check the new fingerprint with " +
        "its operator and pin it (host_key or known_hosts in the sources file)",
    );
  }
}
