import { RelayError } from "../../errors/relay-error.js";
import { shownName } from "../../names/shown-text.js";

/**
 * Batches whose invoices are all final, but whose claimed file is gone from the drop folder (removed from
 * processing/, its folder unmounted): their report, read from the file, cannot be written.
 */
export class BatchFileGoneError extends RelayError {
  readonly code = "BATCH_FILE_GONE";

  constructor(
    readonly batches: readonly { readonly id: string; readonly file: string; readonly path: string }[],
  ) {
    super(
      `${batches
        .map((b) => `batch ${b.id} (${shownName(b.file)}): its file ${shownName(b.path)} is gone`)
        .join(
          "; ",
        )}. Every invoice of it is final and kept in Redis (\`invoice-relay status --batch ID\`), ` +
        "but its report is read from its file: put the file back where it was (or in archive/ under the " +
        "same name) and run again to have it written.",
    );
  }
}
