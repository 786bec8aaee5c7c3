import type { FieldError } from "../invoice/field-error.js";
import type { CanonicalInvoice } from "../invoice/schema.js";
import type { UnreadableFileError } from "./unreadable-file-error.js";

/** One record of a drop file after validation, keys and in-file de-duplication. */
export type ReadItem =
  | {
      readonly kind: "valid";
      readonly line: number;
      readonly invoice: CanonicalInvoice;
      readonly key: string;
    }
  | {
      readonly kind: "rejected";
      readonly line: number;
      readonly errors: readonly FieldError[];
      /** The record's external_id when it could be read, to find the row in the source system. */
      readonly externalId?: string;
      /** The physical lines it holds, when broken quoting may have made one record of several (rowLines). */
      readonly lines?: number;
    }
  /** The same record (same key) appeared earlier in this file. */
  | {
      readonly kind: "duplicate";
      readonly line: number;
      readonly invoice: CanonicalInvoice;
      readonly key: string;
      readonly firstLine: number;
    }
  /** The same external_id appeared earlier in this file with other content. */
  | {
      readonly kind: "conflict";
      readonly line: number;
      readonly invoice: CanonicalInvoice;
      readonly key: string;
      readonly firstLine: number;
      readonly earlierKey: string;
    }
  /** Fields and columns the file has that invoices do not; said once per file, at its end. */
  | { readonly kind: "unknown-fields"; readonly names: readonly string[] }
  /** The file cannot be used as a whole; always the last item. */
  | { readonly kind: "file-error"; readonly error: UnreadableFileError };
