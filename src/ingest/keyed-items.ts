import { coerceError } from "../errors/relay-error.js";
import { deriveKey, type KeyNamespace } from "../invoice/key.js";
import { parseValidInvoice } from "../invoice/field-parsers.js";
import { normaliseFields, type NormaliseResult, type PickedFields } from "../invoice/normalise.js";
import type { CanonicalInvoice } from "../invoice/schema.js";
import type { FileDedupe } from "./file-dedupe.js";
import type { RawItem } from "./raw-item.js";
import type { ReadItem } from "./read-item.js";
import { InvariantError } from "../errors/invariant-error.js";

/** What turning a file's records into read items needs across chunks. */
export interface KeyingContext {
  readonly namespace: KeyNamespace;
  readonly dedupe: FileDedupe;
  /** Unknown field names seen so far; added to as records use them. */
  readonly unknown: Set<string>;
}

/** One chunk's records validated, keyed and checked against the file's earlier records, in file order. */
export function keyItems(items: readonly RawItem[], context: KeyingContext): ReadItem[] {
  const out: ReadItem[] = [];
  for (const item of items) out.push(keyItem(item, context));
  return out;
}

function keyItem(item: RawItem, { namespace, dedupe, unknown }: KeyingContext): ReadItem {
  const { line } = item;
  if (item.kind === "invalid")
    return item.lines === undefined
      ? { kind: "rejected", line, errors: item.errors }
      : { kind: "rejected", line, errors: item.errors, lines: item.lines };
  for (const name of item.picked.unknown) unknown.add(name);
  const valid = item.picked.errors.length === 0 ? validInvoice(item.picked) : undefined;
  const result = valid === undefined ? normaliseAlone(item.picked) : undefined;
  if (result?.ok === false) {
    const id = item.picked.fields.external_id;
    const externalId = typeof id === "string" && id.trim() !== "" ? id.trim().slice(0, 255) : undefined;
    const { span } = item;
    const rejected = {
      kind: "rejected" as const,
      line,
      errors: span === undefined ? result.errors : [span.error, ...result.errors],
      ...(span === undefined ? {} : { lines: span.lines }),
    };
    return externalId === undefined ? rejected : { ...rejected, externalId };
  }
  const invoice = valid ?? result?.invoice;
  if (invoice === undefined) throw new InvariantError(`line ${line}: neither valid nor rejected`);
  const key = deriveKey(invoice, namespace);
  const verdict = dedupe.check(invoice.external_id, key, line);
  if (verdict.kind === "first") return { kind: "valid", line, invoice, key };
  const { firstLine } = verdict;
  if (verdict.kind === "duplicate") return { kind: "duplicate", line, invoice, key, firstLine };
  return { kind: "conflict", line, invoice, key, firstLine, earlierKey: verdict.earlierKey };
}

/** The invoice when every field is valid (the common case, without building a result), else undefined. */
function validInvoice(picked: PickedFields): CanonicalInvoice | undefined {
  try {
    return parseValidInvoice(picked.fields);
  } catch {
    return undefined; // normaliseAlone says why
  }
}

/** normaliseFields, but a record it cannot handle (a value nested too deeply to print) is rejected alone. */
function normaliseAlone(picked: PickedFields): NormaliseResult {
  try {
    return normaliseFields(picked);
  } catch (thrown) {
    const reason = `could not be checked (${coerceError(thrown).message}); is a value nested too deeply?`;
    return { ok: false, errors: [{ field: "(record)", reason }] };
  }
}
