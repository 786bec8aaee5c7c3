import { isPlainJsonAscii } from "./ascii.js";
import type { CanonicalInvoice } from "./schema.js";

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
  const { archive_policy, destination_country } = routing;
  // Every field but external_id is a validated code that needs no escaping; anything else takes the slow path.
  if (
    !isPlainJsonAscii(currency) ||
    !isPlainJsonAscii(document_type) ||
    !isPlainJsonAscii(archive_policy) ||
    !isPlainJsonAscii(destination_country) ||
    !isPlainJsonAscii(schema_version)
  )
    return canonicalJson(invoice);
  return (
    `{"currency":"${currency}","document_type":"${document_type}","external_id":${JSON.stringify(invoice.external_id)},` +
    `"routing":{"archive_policy":"${archive_policy}","destination_country":"${destination_country}"},` +
    `"schema_version":"${schema_version}"}`
  );
}
