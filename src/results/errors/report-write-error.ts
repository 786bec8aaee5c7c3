import { fileSystemFix } from "../../errors/file-system-fixes.js";
import { RelayError } from "../../errors/relay-error.js";

/** A batch's report could not be written: the file system refused it. Nothing was marked reported. */
export class ReportWriteError extends RelayError {
  readonly code = "REPORT_UNWRITABLE";

  constructor(
    /** The folder the report could not be written to. */
    readonly folder: string,
    /** The drop file it reports on, and its batch. */
    readonly file: string,
    readonly batchId: string,
    /** The errno, one of those fileSystemCode knows (src/errors/file-system-fixes.ts). */
    readonly errno: string,
    options?: ErrorOptions,
  ) {
    super(
      `cannot write the report of ${file} (batch ${batchId}) to ${folder}: ${fileSystemFix(errno)}; ` +
        "then run invoice-relay again: the batch is not marked reported until its report is written",
      options,
    );
  }
}
