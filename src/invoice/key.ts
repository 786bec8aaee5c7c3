import { createHash } from "node:crypto";
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
    trimmed === "" ? DEFAULT_NAMESPACE : isUuid(trimmed) ? trimmed.toLowerCase() : uuidv5(trimmed, DEFAULT_NAMESPACE);
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
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** sha256 of the canonical JSON (UTF-8), lower-case hex. */
export function contentHash(invoice: CanonicalInvoice): string {
  return createHash("sha256").update(canonicalJson(invoice)).digest("hex");
}

/** `UUIDv5(namespace, external_id + "\n" + sha256(canonical JSON))`: same content, same key, forever. */
export function deriveKey(invoice: CanonicalInvoice, namespace: KeyNamespace): string {
  return uuidv5(`${invoice.external_id}\n${contentHash(invoice)}`, namespace.bytes);
}
