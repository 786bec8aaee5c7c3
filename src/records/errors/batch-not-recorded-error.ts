import { RelayError } from "../../errors/relay-error.js";

/** `results --batch ID` names a batch the results database has no record of. */
export class BatchNotRecordedError extends RelayError {
  readonly code = "BATCH_NOT_RECORDED";

  constructor(
    readonly batchId: string,
    where: string,
  ) {
    super(
      `batch "${batchId}" is not in the results database at ${where}; list the batches with ` +
        "`invoice-relay status`, or check RESULTS_DATABASE_URL (a batch dropped moments ago may still be on its way there)",
    );
  }
}
