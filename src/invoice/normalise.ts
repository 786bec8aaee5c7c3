import type { z } from "zod";
import { parseValidInvoice } from "./field-parsers.js";
import { truncateValue, type FieldError } from "./field-error.js";
import { rawInvoiceSchema, type CanonicalInvoice } from "./schema.js";

export type NormaliseResult =
  | { readonly ok: true; readonly invoice: CanonicalInvoice }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

export type FlatField = keyof z.input<typeof rawInvoiceSchema>;

/** Accepted spellings of each field, lower-cased; first match wins, nested `routing` before flat names. */
/** Accepted flat field and column names (lower-cased) and the field each fills. */
export const TOP_LEVEL: ReadonlyMap<string, FlatField> = new Map<string, FlatField>([
  ["external_id", "external_id"],
  ["currency", "currency"],
  ["schema_version", "schema_version"],
  ["document_type", "document_type"],
  ["destination_country", "destination_country"],
  ["routing.destination_country", "destination_country"],
  ["archive_policy", "archive_policy"],
  ["routing.archive_policy", "archive_policy"],
]);
const ROUTING: ReadonlyMap<string, FlatField> = new Map<string, FlatField>([
  ["destination_country", "destination_country"],
  ["archive_policy", "archive_policy"],
]);

/** Canonical field names for error messages. */
export const FIELD_NAMES: Readonly<Record<FlatField, string>> = {
  external_id: "external_id",
  currency: "currency",
  schema_version: "schema_version",
  document_type: "document_type",
  destination_country: "routing.destination_country",
  archive_policy: "routing.archive_policy",
};

export interface PickedFields {
  readonly fields: Partial<Record<FlatField, unknown>>;
  readonly unknown: readonly string[];
  readonly errors: readonly FieldError[];
  /** The source's name for fields a source profile's `columns` mapped, for their errors (FieldError.column). */
  readonly columns?: Readonly<Partial<Record<FlatField, string>>>;
}

/** The source columns of PickedFields without those of the given fields. */
export function withoutFields(
  columns: Readonly<Partial<Record<FlatField, string>>>,
  fields: readonly FlatField[],
): Readonly<Partial<Record<FlatField, string>>> {
  return Object.fromEntries(
    Object.entries(columns).filter(([field]) => !fields.includes(field as FlatField)),
  );
}

/** Lower-cases and trims a field name, as header and key matching is case-insensitive. */
export function normaliseFieldName(name: string): string {
  return name.trim().toLowerCase();
}

/** Why a field given a second time, under `sourceName`, with another value rejects its record. */
export function givenTwice(sourceName: string): string {
  return `is given twice with different values (again as "${sourceName}"); give it once`;
}

/**
 * Fills `fields` one source name at a time: a field given again with another value is an error (named
 * by the source name it came under the second time), the first value stays.
 */
export function fieldSetter(
  fields: Partial<Record<FlatField, unknown>>,
  errors: FieldError[],
): (target: FlatField, value: unknown, sourceName: string) => void {
  return (target, value, sourceName) => {
    if (target in fields && fields[target] !== value) {
      errors.push({
        field: FIELD_NAMES[target],
        reason: givenTwice(sourceName),
      });
      return;
    }
    fields[target] = value;
  };
}

/** Picks the invoice fields out of a flat or nested record; names are matched case-insensitively. */
export function pickFields(record: Readonly<Record<string, unknown>>): PickedFields {
  const fields: Partial<Record<FlatField, unknown>> = {};
  const unknown: string[] = [];
  const errors: FieldError[] = [];
  const set = fieldSetter(fields, errors);
  for (const [name, value] of Object.entries(record)) {
    const lower = normaliseFieldName(name);
    if (lower === "routing") {
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        errors.push({ field: "routing", value: truncateValue(value), reason: "must be an object" });
        continue;
      }
      for (const [inner, innerValue] of Object.entries(value)) {
        const target = ROUTING.get(normaliseFieldName(inner));
        if (target === undefined) unknown.push(`routing.${inner}`);
        else set(target, innerValue, `routing.${inner}`);
      }
      continue;
    }
    const target = TOP_LEVEL.get(lower);
    if (target === undefined) unknown.push(name);
    else set(target, value, name);
  }
  return { fields, unknown, errors };
}

/** Validates and normalises picked fields into the canonical document (keys in canonical order). */
export function normaliseFields(picked: PickedFields): NormaliseResult {
  const invoice = picked.errors.length === 0 ? parseValidInvoice(picked.fields) : undefined;
  if (invoice !== undefined) return { ok: true, invoice };
  const parsed = rawInvoiceSchema.safeParse(picked.fields);
  const errors = [...picked.errors];
  for (const issue of parsed.error?.issues ?? []) {
    const key = issue.path[0];
    const field = typeof key === "string" && key in FIELD_NAMES ? FIELD_NAMES[key as FlatField] : String(key);
    const raw = typeof key === "string" ? picked.fields[key as FlatField] : undefined;
    const column = typeof key === "string" ? picked.columns?.[key as FlatField] : undefined;
    const error: FieldError =
      raw === undefined
        ? { field, reason: issue.message }
        : { field, value: truncateValue(raw), reason: issue.message };
    errors.push(column === undefined ? error : { ...error, column });
  }
  return { ok: false, errors };
}

/** One record (flat or nested object) to a canonical invoice or field errors. */
export function normaliseRecord(record: unknown): NormaliseResult & { readonly unknown: readonly string[] } {
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    return {
      ok: false,
      errors: [{ field: "(record)", value: truncateValue(record), reason: "must be an object" }],
      unknown: [],
    };
  }
  const picked = pickFields(record as Record<string, unknown>);
  return { ...normaliseFields(picked), unknown: picked.unknown };
}
