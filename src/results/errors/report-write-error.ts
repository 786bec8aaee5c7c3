import { RelayError } from "../../errors/relay-error.js";

/**
 * What stops a file being written, by its errno, and what to do about it: each is a state of the file
 * system the operator fixes, not a fault of the batch.
 */
const FIXES: Readonly<Record<string, string>> = {
  ENOSPC: "the file system is full; free space on it",
  EDQUOT: "the disk quota of the user running invoice-relay is used up; free space or raise the quota",
  EROFS: "the file system is mounted read-only; mount it read-write",
  EACCES: "permission denied; let the user running invoice-relay write to that folder",
  EPERM: "the operation is not permitted; let the user running invoice-relay write to that folder",
  EIO: "the disk reported an I/O error; check the disk",
};

/** The errno of a failed write when it is one FIXES explains, else undefined. */
export function fileSystemCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && code in FIXES ? code : undefined;
}

/** A batch's report could not be written: the file system refused it. Nothing was marked reported. */
export class ReportWriteError extends RelayError {
  readonly code = "REPORT_UNWRITABLE";

  constructor(
    /** The folder the report could not be written to. */
    readonly folder: string,
    /** The drop file it reports on, and its batch. */
    readonly file: string,
    readonly batchId: string,
    /** The errno, one of those fileSystemCode knows. */
    readonly errno: string,
    options?: ErrorOptions,
  ) {
    super(
      `cannot write the report of ${file} (batch ${batchId}) to ${folder}: ${errno}, ${FIXES[errno] ?? "the write failed"}; ` +
        "then run invoice-relay again: the batch is not marked reported until its report is written",
      options,
    );
  }
}
