import { RelayError } from "../../errors/relay-error.js";

/** `--batch ID` names a batch this Redis and QUEUE_PREFIX do not know. */
export class UnknownBatchError extends RelayError {
  readonly code = "BATCH_UNKNOWN";

  constructor(
    readonly batchId: string,
    readonly queuePrefix: string,
  ) {
    super(
      `batch "${batchId}" is not known under QUEUE_PREFIX=${queuePrefix}; ` +
        "list the batches with `invoice-relay status`, or check REDIS_URL and QUEUE_PREFIX",
    );
  }
}
