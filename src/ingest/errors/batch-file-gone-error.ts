import { RelayError } from "../../errors/relay-error.js";
import { shownName } from "../../names/shown-text.js";

/**
 * What became of the report of a batch whose file is gone (reportGoneFile in src/results/finalize.ts):
 * written from Redis alone, at this path; or not, and where and why it could not be.
 */
export type GoneFileReport = { readonly written: string } | { readonly notWritten: string };

/** A batch whose file is gone, and what became of its report. */
export interface GoneBatch {
  readonly id: string;
  readonly file: string;
  readonly path: string;
  readonly report: GoneFileReport;
}

/**
 * Batches whose invoices are all final, but whose claimed file is gone from the drop folder (removed from
 * processing/, its folder unmounted): their report was written from what Redis keeps where it could be,
 * or could not be written at all.
 */
export class BatchFileGoneError extends RelayError {
  readonly code = "BATCH_FILE_GONE";

  constructor(readonly batches: readonly GoneBatch[]) {
    super(
      `${batches.map(goneText).join("; ")}. Every invoice of it is final and kept in Redis ` +
        "(`invoice-relay status --batch ID`); rows it did not send are named only in its file: put the " +
        "file back where it was (or in archive/ under the same name) to have them reported.",
    );
  }
}

/** `batch … (x.csv): its file … is gone; …`: one gone batch, and where its report is or why it is not. */
export function goneText(batch: GoneBatch): string {
  return `batch ${batch.id} (${shownName(batch.file)}): its file ${shownName(batch.path)} is gone; ${reportText(batch)}`;
}

/**
 * What a pass's record says of the file (a LeftFile's `why`), as soon as it is seen gone: its batch, and
 * its report, or the invoices not final yet (still sent; the report is written once they are).
 */
export function goneWhy(
  batch: Omit<GoneBatch, "report"> & { readonly report: GoneFileReport | number },
): string {
  const report =
    typeof batch.report === "number"
      ? `${batch.report} invoice(s) of it not final yet go on being sent, and its report is written from Redis once they are`
      : reportText({ ...batch, report: batch.report });
  return `(batch ${batch.id}) gone from the drop folder mid-night; ${report}`;
}

function reportText(batch: GoneBatch): string {
  return "written" in batch.report
    ? `its report, written from Redis, is ${shownName(batch.report.written)}`
    : `its report could not be written ${batch.report.notWritten}: a later run writes it once it can`;
}
