import { RelayError } from "../../../errors/relay-error.js";

/**
 * An SFTP source could not be reached or refused this process's credentials (`reason`), or a transfer
 * was cut. The source is tried again at its next poll, with backoff; other sources go on.
 */
export class RemoteSourceUnavailableError extends RelayError {
  readonly code = "SFTP_SOURCE_UNAVAILABLE";

  constructor(
    readonly source: string,
    readonly reason: "auth" | "connect" | "transfer" | "secret",
    detail: string,
  ) {
    super(`SFTP source ${source}: ${detail}`);
  }
}
