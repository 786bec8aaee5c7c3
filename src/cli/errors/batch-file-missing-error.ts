import { RelayError } from "../../errors/relay-error.js";

/** A batch's rows are read from its file, which is not on this machine (or was moved by hand). */
export class BatchFileMissingError extends RelayError {
  readonly code = "BATCH_FILE_MISSING";

  constructor(
    readonly batchId: string,
    readonly path: string,
  ) {
    super(
      `the file of batch ${batchId} is not at ${path}: run this on the machine whose drop folder has it ` +
        "(archive/ or processing/), or export every record without --batch",
    );
  }
}
