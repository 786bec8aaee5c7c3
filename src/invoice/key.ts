import { hash } from "node:crypto";
import { parse as parseUuid, validate as isUuid, v5 as uuidv5 } from "uuid";
import { writeAscii } from "./ascii.js";
import { contentHash } from "./content-hash.js";
import type { CanonicalInvoice } from "./schema.js";

/**
 * The namespace used when IDEMPOTENCY_NAMESPACE is not set. Frozen: changing it changes every key, and
 * changed keys would resend invoices the service has already accepted.
 */
export const DEFAULT_NAMESPACE = "8f0c6a52-3b1e-5d47-9a6f-2c4e7b91d03a";

/** A namespace ready for key derivation: the UUID and its bytes, parsed once. */
export interface KeyNamespace {
  readonly uuid: string;
  readonly bytes: Uint8Array;
}

/** IDEMPOTENCY_NAMESPACE is a UUID, or any other name, hashed into one under the default namespace. */
export function resolveNamespace(value?: string): KeyNamespace {
  const trimmed = value?.trim() ?? "";
  const uuid =
    trimmed === ""
      ? DEFAULT_NAMESPACE
      : isUuid(trimmed)
        ? trimmed.toLowerCase()
        : uuidv5(trimmed, DEFAULT_NAMESPACE);
  return { uuid, bytes: parseUuid(uuid) };
}

export { canonicalJson, invoiceJson } from "./canonical-json.js";

/** `UUIDv5(namespace, external_id + "\n" + sha256(canonical JSON))`: same content, same key, forever. */
export function deriveKey(invoice: CanonicalInvoice, namespace: KeyNamespace): string {
  const digest = contentHash(invoice);
  const id = invoice.external_id;
  // The name is written in place (id, "\n", digest) rather than concatenated and then encoded.
  reserve(16 + id.length * 3 + 1 + digest.length);
  scratch.set(namespace.bytes, 0);
  let at = 16 + writeAscii(scratch, id, 16);
  if (at < 16) at = 16 + scratch.write(id, 16, "utf8");
  scratch[at++] = 0x0a;
  at += scratch.write(digest, at, "latin1");
  return formatUuidV5(hash("sha1", view(at), "hex"));
}

// Reusable buffers for the SHA-1 input (namespace bytes + name) and the UUID text: no allocation per key,
// and the key comes out as a flat string, cheap to read character by character later.
let scratch = Buffer.alloc(1024);
// Views of scratch by length, made once each: hash() takes a view, and a new one per key is garbage.
let views: Buffer[] = [];
const uuidText = Buffer.alloc(36);
const HEX_DIGITS = "0123456789abcdef";
// Where hex digit n of the SHA-1 digest goes in the 36-character UUID (after the dashes).
const UUID_POSITIONS = [
  0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32,
  33, 34, 35,
];

function reserve(bytes: number): void {
  if (bytes <= scratch.length) return;
  scratch = Buffer.alloc(Math.max(bytes, scratch.length * 2));
  views = [];
}

function view(length: number): Buffer {
  return (views[length] ??= scratch.subarray(0, length));
}

/** The first 128 bits of a SHA-1 digest (hex) as a UUID of version 5 and the RFC 9562 variant. */
function formatUuidV5(hex: string): string {
  for (let n = 0; n < 32; n++) uuidText[UUID_POSITIONS[n] ?? 0] = hex.charCodeAt(n);
  for (const dash of [8, 13, 18, 23]) uuidText[dash] = 0x2d;
  uuidText[14] = 0x35; // version 5
  uuidText[19] = HEX_DIGITS.charCodeAt(0x8 | (Number.parseInt(hex.charAt(16), 16) & 0x3)); // variant 10xx
  return uuidText.toString("latin1", 0, 36);
}
