import { deriveKey, resolveNamespace } from "../../src/invoice/key.js";
import { normaliseRecord } from "../../src/invoice/normalise.js";
import type { CanonicalInvoice } from "../../src/invoice/schema.js";

const COUNTRIES = ["DE", "FR", "US", "JP", "BR"];
const CURRENCIES = ["EUR", "EUR", "USD", "JPY", "BRL"];

export interface KeyedInvoice {
  readonly key: string;
  readonly invoice: CanonicalInvoice;
}

/** A valid canonical invoice and its key; `tag` keeps ids of different tests apart. */
export function testInvoice(i: number, tag = "T"): KeyedInvoice {
  const result = normaliseRecord({
    external_id: `${tag}-${i}`,
    currency: CURRENCIES[i % 5],
    destination_country: COUNTRIES[i % 5],
    archive_policy: `eu-${(i % 9) + 1}y`,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return { key: deriveKey(result.invoice, resolveNamespace()), invoice: result.invoice };
}

export function testInvoices(count: number, tag = "T"): KeyedInvoice[] {
  return Array.from({ length: count }, (_, i) => testInvoice(i + 1, tag));
}
