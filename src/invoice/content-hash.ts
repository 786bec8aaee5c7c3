import { hash } from "node:crypto";
import { isPlainJsonAscii, writeAscii } from "./ascii.js";
import { invoiceJson } from "./canonical-json.js";
import type { CanonicalInvoice } from "./schema.js";

let buffer = Buffer.alloc(1024);
let views: Buffer[] = []; // views of buffer by length: hash() takes a view, and one per invoice is garbage

/**
 * sha256 (lower-case hex) of the invoice's canonical JSON in UTF-8. When every value is printable ASCII
 * that JSON writes unescaped, which is what validation leaves in practice, the bytes are written straight
 * into a reused buffer; otherwise the JSON text is built and hashed. Both give the bytes of invoiceJson.
 *
 * The JSON is a prefix (up to the external_id), the id, and a suffix; prefix and suffix depend only on
 * the coded fields, which take few values in a file, so their bytes are kept once made.
 */
export function contentHash(invoice: CanonicalInvoice): string {
  const { routing } = invoice;
  const prefix = prefixes.get(invoice.currency, invoice.document_type);
  const suffix = suffixes.get(routing.archive_policy, routing.destination_country, invoice.schema_version);
  const id = invoice.external_id;
  if (prefix !== null && suffix !== null) {
    const size = prefix.length + id.length + suffix.length;
    if (size > buffer.length) {
      buffer = Buffer.alloc(Math.max(size, buffer.length * 2));
      views = [];
    }
    buffer.set(prefix, 0);
    const written = writeAscii(buffer, id, prefix.length);
    if (written >= 0) {
      const at = prefix.length + written;
      buffer.set(suffix, at);
      const end = at + suffix.length;
      return hash("sha256", (views[end] ??= buffer.subarray(0, end)), "hex");
    }
  }
  return hash("sha256", invoiceJson(invoice), "hex");
}

// Enough for every combination a file is likely to hold; past that the memo is cleared, not grown.
const MEMO_LIMIT = 4096;

/**
 * JSON bytes made of up to three values, memoised by the values (looked up one by one, never joined);
 * null when a value is not plain ASCII.
 */
class PartMemo {
  private readonly memo = new Map<string, Map<string, Map<string, Uint8Array | null>>>();
  private size = 0;

  constructor(private readonly make: (a: string, b: string, c: string) => string) {}

  get(a: string, b: string, c = ""): Uint8Array | null {
    const hit = this.memo.get(a)?.get(b)?.get(c);
    if (hit !== undefined) return hit;
    if (this.size >= MEMO_LIMIT) {
      this.memo.clear();
      this.size = 0;
    }
    const plain = isPlainJsonAscii(a) && isPlainJsonAscii(b) && isPlainJsonAscii(c);
    const bytes = plain ? Buffer.from(this.make(a, b, c), "latin1") : null;
    let byB = this.memo.get(a);
    if (byB === undefined) this.memo.set(a, (byB = new Map<string, Map<string, Uint8Array | null>>()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map<string, Uint8Array | null>()));
    byC.set(c, bytes);
    this.size++;
    return bytes;
  }
}

const prefixes = new PartMemo(
  (currency, documentType) => `{"currency":"${currency}","document_type":"${documentType}","external_id":"`,
);
const suffixes = new PartMemo(
  (policy, country, version) =>
    `","routing":{"archive_policy":"${policy}","destination_country":"${country}"},"schema_version":"${version}"}`,
);
