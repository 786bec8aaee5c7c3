import { hash } from "node:crypto";
import { parse as parseUuid, validate as isUuid, v5 as uuidv5 } from "uuid";
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

/** JSON with object keys sorted at every level and no white space: the one byte form of a document. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort())
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/**
 * The canonical JSON of an invoice, built field by field in sorted order: the same bytes as
 * `canonicalJson(invoice)`, without sorting on the hot path.
 */
export function invoiceJson(invoice: CanonicalInvoice): string {
  const { currency, document_type, routing, schema_version } = invoice;
  const plain = `${currency}|${document_type}|${routing.archive_policy}|${routing.destination_country}|${schema_version}`;
  // Every field but external_id is a validated code that needs no escaping; anything else takes the slow path.
  if (!PLAIN.test(plain)) return canonicalJson(invoice);
  return (
    `{"currency":"${currency}","document_type":"${document_type}","external_id":${JSON.stringify(invoice.external_id)},` +
    `"routing":{"archive_policy":"${routing.archive_policy}","destination_country":"${routing.destination_country}"},` +
    `"schema_version":"${schema_version}"}`
  );
}

const PLAIN = /^[A-Za-z0-9_|-]*$/;

/** sha256 of the canonical JSON (UTF-8), lower-case hex. */
export function contentHash(invoice: CanonicalInvoice): string {
  return hash("sha256", invoiceJson(invoice), "hex");
}

/** `UUIDv5(namespace, external_id + "\n" + sha256(canonical JSON))`: same content, same key, forever. */
export function deriveKey(invoice: CanonicalInvoice, namespace: KeyNamespace): string {
  return uuidV5(namespace, `${invoice.external_id}\n${contentHash(invoice)}`);
}

const VARIANT = "89ab";
// One reusable buffer for the SHA-1 input (namespace bytes + name): no allocation per key on the hot path.
let scratch = Buffer.alloc(1024);

/** RFC 9562 UUIDv5 (SHA-1 of namespace bytes + UTF-8 name), with node's native hash. */
export function uuidV5(namespace: KeyNamespace, name: string): string {
  const needed = 16 + Buffer.byteLength(name, "utf8");
  if (needed > scratch.length) scratch = Buffer.alloc(Math.max(needed, scratch.length * 2));
  scratch.set(namespace.bytes, 0);
  scratch.write(name, 16, "utf8");
  const hex = hash("sha1", scratch.subarray(0, needed), "hex");
  const variant = VARIANT[Number.parseInt(hex.charAt(16), 16) & 0x3] ?? "8";
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
