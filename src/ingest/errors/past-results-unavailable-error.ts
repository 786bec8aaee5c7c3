import { RelayError } from "../../errors/relay-error.js";

/**
 * The results of record (PostgreSQL) could not say which rows of a file succeeded before Redis's
 * retention forgot them. Ingest stops rather than send them again: the file stays claimed.
 */
export class PastResultsUnavailableError extends RelayError {
  readonly code = "PAST_RESULTS_UNAVAILABLE";

  constructor(
    readonly file: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(
      `ingest of ${file} stopped: the results of record could not be asked which of its invoices were ` +
        `sent before Redis's retention (${reason}). Nothing was sent again; the file stays in processing/ ` +
        "and the next `invoice-relay run` resumes it once PostgreSQL answers (check RESULTS_DATABASE_URL)",
      options,
    );
  }
}
