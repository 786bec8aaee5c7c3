import { RelayError } from "../../errors/relay-error.js";

/**
 * The deployment's outbox is on (a process started with RESULTS_DATABASE_URL turned it on) and this
 * command, which writes to the ledger, has no RESULTS_DATABASE_URL. Every step would add events that no
 * exporter drains, and retention keeps every batch reported after the oldest of them, so the command
 * refuses before it claims or writes anything (docs/results-of-record.md).
 */
export class OutboxWithoutDatabaseError extends RelayError {
  readonly code = "OUTBOX_WITHOUT_DATABASE";

  constructor(
    readonly queuePrefix: string,
    readonly backlog: number,
  ) {
    super(
      `RESULTS_DATABASE_URL is not set, but QUEUE_PREFIX=${queuePrefix} exports its results to PostgreSQL: ` +
        `a process started with RESULTS_DATABASE_URL turned its outbox on (${backlog} event(s) not exported ` +
        "yet). Without an exporter the outbox would grow for ever and retention would keep every batch. " +
        "Set RESULTS_DATABASE_URL to the deployment's PostgreSQL again, or, to go on with Redis only, run " +
        "`invoice-relay db detach`: it turns the outbox off and drops the events not exported yet (the " +
        "results of record will miss them). See docs/results-of-record.md. Nothing was claimed or written.",
    );
  }
}
