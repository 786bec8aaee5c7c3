import { RelayError } from "../../../errors/relay-error.js";

/**
 * An SFTP source could not be reached (`connect`), refused this process's credentials (`auth`), a
 * transfer was cut (`transfer`), the pass's deadline or a signal to stop ended a wait on it (`deadline`),
 * or its configuration cannot be used (`secret`: a key, passphrase or password; `config`: known_hosts).
 * Only `connect` and `transfer` are tried again within a pass, with backoff; `deadline` at the next
 * pass; the others wait for the operator. Other sources go on.
 */
export class RemoteSourceUnavailableError extends RelayError {
  readonly code = "SFTP_SOURCE_UNAVAILABLE";

  constructor(
    readonly source: string,
    readonly reason: "auth" | "connect" | "transfer" | "deadline" | "secret" | "config",
    /** What went wrong, without the source's name. */
    readonly detail: string,
    /** A `transfer` the server left unanswered: the clause naming the server, its patience and the step. */
    readonly unanswered?: string | undefined,
  ) {
    super(`SFTP source ${source}: ${detail}`);
  }
}
