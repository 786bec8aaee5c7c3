import type { z } from "zod";
import { rawInvoiceSchema, type CanonicalInvoice } from "./schema.js";

/**
 * The fields of `rawInvoiceSchema`, each parsed by its own zod schema. The coded fields (currency,
 * country, archive policy, type, version) take few distinct values in a file, so their outcomes are
 * memoised by the raw text: a million-row file runs zod on each distinct value once, and on every
 * external_id. Parsing is pure, so a memoised outcome is the outcome.
 */
export type ParsedFields = z.output<typeof rawInvoiceSchema>;

const shape = rawInvoiceSchema.shape;
// Enough for every currency or country there is; past that the memo is cleared rather than grown.
const MEMO_LIMIT = 1024;

type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false };
const FAILED: Outcome<never> = Object.freeze({ ok: false });

function memoised<T>(parse: (input: unknown) => Outcome<T>): (input: unknown) => Outcome<T> {
  const memo = new Map<string, Outcome<T>>();
  let absent: Outcome<T> | undefined; // a column or field the file does not have: the same every row
  return (input) => {
    if (input === undefined) return (absent ??= parse(undefined));
    if (typeof input !== "string") return parse(input);
    let outcome = memo.get(input);
    if (outcome === undefined) {
      if (memo.size >= MEMO_LIMIT) memo.clear();
      outcome = parse(input);
      memo.set(input, outcome);
    }
    return outcome;
  };
}

function parser<T>(schema: {
  safeParse(input: unknown): { success: true; data: T } | { success: false };
}): (input: unknown) => Outcome<T> {
  return (input) => {
    const result = schema.safeParse(input);
    return result.success ? { ok: true, value: result.data } : FAILED;
  };
}

const currency = memoised(parser(shape.currency));
const documentType = memoised(parser(shape.document_type));
const archivePolicy = memoised(parser(shape.archive_policy));
const destinationCountry = memoised(parser(shape.destination_country));
const schemaVersion = memoised(parser(shape.schema_version));
const externalId = shape.external_id;

/**
 * The canonical invoice when every field is valid, else undefined: the caller then runs the whole
 * object schema for its issues, so errors read exactly as zod reports them.
 */
export function parseValidInvoice(
  fields: Readonly<Partial<Record<keyof ParsedFields, unknown>>>,
): CanonicalInvoice | undefined {
  const c = currency(fields.currency);
  const d = documentType(fields.document_type);
  const e = externalId.safeParse(fields.external_id);
  const a = archivePolicy(fields.archive_policy);
  const n = destinationCountry(fields.destination_country);
  const s = schemaVersion(fields.schema_version);
  if (!c.ok || !d.ok || !e.success || !a.ok || !n.ok || !s.ok) return undefined;
  // Keys in canonical (sorted) order, as canonicalInvoiceSchema declares them.
  return {
    currency: c.value,
    document_type: d.value,
    external_id: e.data,
    routing: { archive_policy: a.value, destination_country: n.value },
    schema_version: s.value,
  };
}
