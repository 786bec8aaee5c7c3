import { RelayError } from "../../errors/relay-error.js";

/**
 * The results of record (PostgreSQL) could not say what became of a file's invoices before Redis's
 * retention forgot them: PostgreSQL refused the look-up, or did not answer before the wait for it was
 * given up (`run --deadline`, a signal). Ingest stops rather than send them unchecked: the file stays
 * claimed.
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
        `sent before Redis's retention (${reason}). Nothing of it was sent unchecked; the file stays in processing/ ` +
        "and the next `invoice-relay run` resumes it once PostgreSQL answers (check RESULTS_DATABASE_URL)",
      options,
    );
  }
}
