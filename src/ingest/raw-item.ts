import type { FieldError } from "../invoice/field-error.js";
import type { PickedFields } from "../invoice/normalise.js";

/** What a format reader yields per record, before normalisation and keys. */
export type RawItem =
  | {
      readonly kind: "fields";
      readonly line: number;
      readonly picked: PickedFields;
      /**
       * A record whose quoted field took several lines: if it is rejected, the error that names them
       * first, and it counts for each of its lines (rowLines), as a record that cannot be split does.
       */
      readonly span?: { readonly lines: number; readonly error: FieldError };
    }
  | {
      readonly kind: "invalid";
      readonly line: number;
      readonly errors: readonly FieldError[];
      /** The physical lines it holds, when more than one (rowLines). */
      readonly lines?: number;
    };

/**
 * How many rows a record counts for: a record that cannot be split (broken quoting) counts every line it
 * holds, as each may have been a row of its own, so a file's rows add up to its lines; so does a record
 * that splits over several lines and is rejected (its quote may have been stray); a valid record counts
 * one, whatever line breaks its quoted fields hold.
 */
export function rowLines(item: { readonly lines?: number | undefined }): number {
  return item.lines ?? 1;
}
