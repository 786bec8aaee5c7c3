import { RelayError } from "../../errors/relay-error.js";

/** Batches a pass waited for are gone from Redis, and their files are not in processing/ to ingest again. */
export class BatchLostError extends RelayError {
  readonly code = "BATCH_LOST";

  constructor(readonly batchIds: readonly string[]) {
    super(
      `Redis no longer knows batch(es) ${batchIds.join(", ")} and their files are not in processing/ ` +
        "(Redis restarted without persistence, failed over to a stale replica, or was flushed?). Their " +
        "invoices may not all have been sent: find each file in archive/ (its name starts with the batch " +
        "id) and drop it again; the same invoices get the same keys, so nothing already accepted is sent twice.",
    );
  }
}
