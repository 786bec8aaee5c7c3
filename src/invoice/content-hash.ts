import { hash } from "node:crypto";
import { writeAscii } from "./ascii.js";
import { invoiceJson } from "./canonical-json.js";
import type { CanonicalInvoice } from "./schema.js";

// The canonical JSON around the six values, in key order (see invoiceJson).
const PARTS = [
  '{"currency":"',
  '","document_type":"',
  '","external_id":"',
  '","routing":{"archive_policy":"',
  '","destination_country":"',
  '"},"schema_version":"',
  '"}',
].map((part) => Buffer.from(part, "latin1"));
const PARTS_BYTES = PARTS.reduce((sum, part) => sum + part.length, 0);

let buffer = Buffer.alloc(1024);
let views: Buffer[] = []; // views of buffer by length: hash() takes a view, and one per invoice is garbage

/**
 * sha256 (lower-case hex) of the invoice's canonical JSON in UTF-8. When every value is printable ASCII
 * that JSON writes unescaped, which is what validation leaves in practice, the bytes are written straight
 * into a reused buffer; otherwise the JSON text is built and hashed. Both give the bytes of invoiceJson.
 */
export function contentHash(invoice: CanonicalInvoice): string {
  const { routing } = invoice;
  const values = [
    invoice.currency,
    invoice.document_type,
    invoice.external_id,
    routing.archive_policy,
    routing.destination_country,
    invoice.schema_version,
  ];
  let size = PARTS_BYTES;
  for (const value of values) size += value.length;
  if (size > buffer.length) {
    buffer = Buffer.alloc(Math.max(size, buffer.length * 2));
    views = [];
  }
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    at = copy(PARTS[i], at);
    const written = writeAscii(buffer, values[i] ?? "", at);
    if (written < 0) return hash("sha256", invoiceJson(invoice), "hex");
    at += written;
  }
  at = copy(PARTS[values.length], at);
  return hash("sha256", (views[at] ??= buffer.subarray(0, at)), "hex");
}

function copy(part: Buffer | undefined, at: number): number {
  if (part === undefined) return at;
  buffer.set(part, at);
  return at + part.length;
}
