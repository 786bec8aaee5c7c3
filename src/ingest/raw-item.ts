import type { FieldError } from "../invoice/field-error.js";
import type { PickedFields } from "../invoice/normalise.js";

/** What a format reader yields per record, before normalisation and keys. */
export type RawItem =
  | { readonly kind: "fields"; readonly line: number; readonly picked: PickedFields }
  | { readonly kind: "invalid"; readonly line: number; readonly errors: readonly FieldError[] };
