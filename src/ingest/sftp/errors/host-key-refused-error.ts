import { RelayError } from "../../../errors/relay-error.js";

/**
 * The SFTP server offered no host key that is pinned (`offered`: each key it offered, or none of a pinned
 * type): nothing is sent to it or taken from it.
 */
export class HostKeyRefusedError extends RelayError {
  readonly code = "SFTP_HOST_KEY_REFUSED";

  constructor(
    readonly source: string,
    readonly server: string,
    readonly expected: string,
    readonly offered: readonly string[],
  ) {
    super(
      `SFTP source ${source}: ${server} offered ${offeredText(offered)}, but ${expected} is pinned; ` +
        "the connection was refused. If the server's key really changed, check the new fingerprint with " +
        "its operator and pin it (host_key or known_hosts in the sources file)",
    );
  }
}

function offeredText(offered: readonly string[]): string {
  if (offered.length === 0) return "no host key of a pinned type";
  return `host key${offered.length === 1 ? "" : "s"} ${offered.join(" and ")}`;
}
