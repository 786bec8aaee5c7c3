import { RelayError } from "../../errors/relay-error.js";
import { BATCH_ID_SHAPE } from "../../ledger/batch-id.js";

/** `--batch ID` is not of the shape the relay gives batch ids, so it can name no batch. */
export class MalformedBatchIdError extends RelayError {
  readonly code = "BATCH_ID_MALFORMED";

  constructor(readonly batchId: string) {
    const shown = JSON.stringify(batchId.length > 60 ? `${batchId.slice(0, 60)}…` : batchId);
    super(
      `--batch ${shown} is not a batch id: a batch id looks like ${BATCH_ID_SHAPE}; ` +
        "`invoice-relay status` lists the batches with their ids",
    );
  }
}
