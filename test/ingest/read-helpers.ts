import { readInvoices, type FileFormat } from "../../src/ingest/read-invoice-file.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import { deriveKey, resolveNamespace } from "../../src/invoice/key.js";
import { normaliseRecord } from "../../src/invoice/normalise.js";
import type { CanonicalInvoice } from "../../src/invoice/schema.js";

export const ns = resolveNamespace();

export const HEADER = "external_id,currency,destination_country,archive_policy";

/** A CSV data row in HEADER's column order. */
export function row(id: string, currency = "EUR", country = "DE", policy = "eu-10y"): string {
  return [id, currency, country, policy].join(",");
}

/** A nested invoice record as JSON and NDJSON files carry it. */
export function record(id: string, currency = "EUR", country = "DE", policy = "eu-10y"): object {
  return { external_id: id, currency, routing: { destination_country: country, archive_policy: policy } };
}

/** The canonical invoice a valid raw record becomes; throws if it is not valid. */
export function canonical(raw: Record<string, unknown>): CanonicalInvoice {
  const result = normaliseRecord(raw);
  if (!result.ok) throw new Error(`not a valid record: ${JSON.stringify(result.errors)}`);
  return result.invoice;
}

export function keyOf(raw: Record<string, unknown>): string {
  return deriveKey(canonical(raw), ns);
}

export function bytesOf(input: string | Uint8Array): Uint8Array {
  return typeof input === "string" ? new TextEncoder().encode(input) : input;
}

/** The bytes whole (one chunk), or cut into pieces of the given sizes, cycling through them. */
export function* pieces(bytes: Uint8Array, sizes: readonly number[] = []): Generator<Uint8Array> {
  if (sizes.length === 0) {
    yield bytes.slice();
    return;
  }
  let at = 0;
  for (let k = 0; at < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length] ?? 1);
    yield bytes.slice(at, at + size);
    at += size;
  }
}

/** `pieces` as a byte stream that hands out each piece asynchronously, as a file stream does. */
export async function* chunked(bytes: Uint8Array, sizes: readonly number[] = []): AsyncGenerator<Uint8Array> {
  for (const piece of pieces(bytes, sizes)) yield await Promise.resolve(piece);
}

/** Every item `readInvoices` yields for the input, fed whole or in pieces of the given sizes. */
export async function readAll(
  input: string | Uint8Array,
  format: FileFormat,
  sizes: readonly number[] = [],
): Promise<ReadItem[]> {
  const items: ReadItem[] = [];
  const source = chunked(bytesOf(input), sizes);
  for await (const item of readInvoices(source, { namespace: ns, format, displayName: "drop.file" })) {
    items.push(item);
  }
  return items;
}

export type PlainItem =
  | Exclude<ReadItem, { kind: "file-error" }>
  | {
      readonly kind: "file-error";
      readonly code: string;
      readonly message: string;
      readonly position: object;
    };

/** Items with the file error as plain data, so two reads can be compared deeply. */
export function plain(items: readonly ReadItem[]): PlainItem[] {
  return items.map((item) =>
    item.kind === "file-error"
      ? {
          kind: "file-error",
          code: item.error.code,
          message: item.error.message,
          position: { ...item.error.position },
        }
      : item,
  );
}

/** `kind@line` for each record item; `unknown-fields` and `file-error` by kind only. */
export function outline(items: readonly ReadItem[]): string[] {
  return items.map((item) =>
    item.kind === "file-error" || item.kind === "unknown-fields" ? item.kind : `${item.kind}@${item.line}`,
  );
}

/** The keys of the items that have one (valid, duplicate, conflict), in order. */
export function keysOf(items: readonly ReadItem[]): string[] {
  return items.flatMap((item) => ("key" in item ? [item.key] : []));
}

export function fileErrorOf(items: readonly ReadItem[]): Extract<ReadItem, { kind: "file-error" }> {
  const last = items.at(-1);
  if (last?.kind !== "file-error")
    throw new Error(`expected a file-error last, got ${outline(items).join(" ")}`);
  return last;
}

export function rejectionAt(
  items: readonly ReadItem[],
  line: number,
): Extract<ReadItem, { kind: "rejected" }> {
  const found = items.find((item) => item.kind === "rejected" && item.line === line);
  if (found?.kind !== "rejected")
    throw new Error(`no rejected item at line ${line}: ${outline(items).join(" ")}`);
  return found;
}

export function validAt(items: readonly ReadItem[], line: number): Extract<ReadItem, { kind: "valid" }> {
  const found = items.find((item) => item.kind === "valid" && item.line === line);
  if (found?.kind !== "valid") throw new Error(`no valid item at line ${line}: ${outline(items).join(" ")}`);
  return found;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
