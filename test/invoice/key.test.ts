import { createHash } from "node:crypto";
import fc from "fast-check";
import { v5 as uuidv5 } from "uuid";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  deriveKey,
  DEFAULT_NAMESPACE,
  invoiceJson,
  resolveNamespace,
} from "../../src/invoice/key.js";
import { normaliseRecord } from "../../src/invoice/normalise.js";
import type { CanonicalInvoice } from "../../src/invoice/schema.js";

const ns = resolveNamespace();

function canonical(record: Record<string, unknown>): CanonicalInvoice {
  const result = normaliseRecord(record);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.invoice;
}

// Frozen golden vectors: these exact UUIDs must never change, or invoices already accepted by the
// service would be sent again under new keys. Computed independently of this code base.
const GOLDEN: readonly (readonly [Record<string, unknown>, string])[] = [
  [{ external_id: "INV-0001", currency: "EUR", routing: { destination_country: "DE", archive_policy: "eu-10y" } }, "506a2896-8a30-5141-8914-a912b146710a"],
  [{ external_id: "INV-0002", currency: "USD", destination_country: "US", archive_policy: "us-east-7y" }, "fb2d27fe-cc5a-5a74-9777-6497ba2c494b"],
  [{ external_id: "INV-0003", currency: "JPY", "routing.destination_country": "JP", "routing.archive_policy": "ap-northeast-1-30d" }, "7157e9d8-901b-55dc-8424-df96c59d9f76"],
  [{ external_id: "Rechnung-Ä-ß-001", currency: "EUR", routing: { destination_country: "AT", archive_policy: "eu-central-6m" } }, "662beb1e-83ec-52ec-bba2-f0c172069a31"],
  [{ external_id: "請求書-2026-0001", currency: "JPY", destination_country: "JP", archive_policy: "jp-5y" }, "4eaa98b4-e5f7-58ae-b435-11685bf4d5eb"],
  [{ external_id: "فاتورة-١٢٣", currency: "SAR", destination_country: "SA", archive_policy: "me-10y" }, "4a2dd7d0-dd40-559d-b222-275669453a94"],
  [{ external_id: "INV-😀-0007", currency: "GBP", destination_country: "GB", archive_policy: "uk-7y" }, "01d56f8c-10ba-5daf-85bd-7f4025953114"],
  [{ external_id: "a", currency: "CHF", destination_country: "CH", archive_policy: "ch-1d" }, "da9546e9-a45f-5615-a9db-240375cb958c"],
  [{ external_id: "x".repeat(255), currency: "SEK", destination_country: "SE", archive_policy: "eu-north-1-12m" }, "ada0f78d-0281-521b-99c1-2b1dcf96c517"],
  [{ external_id: "INV 0010 with spaces", currency: "BRL", destination_country: "BR", archive_policy: "sa-east-1-5y" }, "d8e3b447-ff22-5588-91d5-062655a1a6a2"],
  [{ external_id: "INV-0011", currency: "XOF", destination_country: "SN", archive_policy: "af-3y", schema_version: "2026-10-16", document_type: "invoice" }, "d1506b02-9f84-52d5-a748-f6a2e11961bf"],
]; // prettier-ignore

describe("idempotency keys", () => {
  it.each(GOLDEN)(
    "when the record %j is keyed, then the key is the frozen golden UUID",
    (record, expected) => {
      expect(deriveKey(canonical(record), ns)).toBe(expected);
    },
  );

  it("when the default namespace is used, then it is the frozen constant", () => {
    expect(ns.uuid).toBe(DEFAULT_NAMESPACE);
    expect(DEFAULT_NAMESPACE).toBe("8f0c6a52-3b1e-5d47-9a6f-2c4e7b91d03a");
  });

  it("when IDEMPOTENCY_NAMESPACE is a name, then it is hashed into a UUID under the default namespace", () => {
    const named = resolveNamespace("acme-prod");
    expect(named.uuid).toBe("7fe25c93-5e3e-51c4-aeb4-d41bb82b8d90");
    const record = GOLDEN[0]?.[0] ?? {};
    expect(deriveKey(canonical(record), named)).toBe("19148b91-7905-5576-be7d-38166ca102a2");
  });

  it("when IDEMPOTENCY_NAMESPACE is a UUID, then it is used as it is (case-insensitively)", () => {
    expect(resolveNamespace("7FE25C93-5E3E-51C4-AEB4-D41BB82B8D90").uuid).toBe(
      "7fe25c93-5e3e-51c4-aeb4-d41bb82b8d90",
    );
  });

  it("when the same invoice comes flat, nested, re-ordered, in other case and padded, then the key is the same", () => {
    const nested = {
      external_id: "INV-0001",
      currency: "EUR",
      routing: { destination_country: "DE", archive_policy: "eu-10y" },
    };
    const variants = [
      {
        routing: { archive_policy: "eu-10y", destination_country: "DE" },
        currency: "EUR",
        external_id: "INV-0001",
      },
      { ARCHIVE_POLICY: " EU-10Y ", Destination_Country: "de", Currency: " eur", External_ID: " INV-0001 " },
      {
        "Routing.Archive_Policy": "eu-10y",
        "routing.destination_country": "DE",
        currency: "EUR",
        external_id: "INV-0001",
        document_type: "invoice",
      },
      {
        external_id: "INV-0001",
        currency: "EUR",
        destination_country: "DE",
        archive_policy: "eu-10y",
        schema_version: "",
        document_type: "",
      },
    ];
    const expected = deriveKey(canonical(nested), ns);
    for (const variant of variants) expect(deriveKey(canonical(variant), ns)).toBe(expected);
  });

  it("when any field of the content changes, then the key changes", () => {
    const base = {
      external_id: "INV-1",
      currency: "EUR",
      destination_country: "DE",
      archive_policy: "eu-10y",
    };
    const key = deriveKey(canonical(base), ns);
    for (const change of [
      { currency: "USD" },
      { destination_country: "FR" },
      { archive_policy: "eu-11y" },
      { external_id: "INV-2" },
    ]) {
      expect(deriveKey(canonical({ ...base, ...change }), ns)).not.toBe(key);
    }
  });

  it("when a canonical document is serialised, then keys are sorted at every level with no white space", () => {
    const invoice = canonical({
      external_id: "Rechnung-Ä-ß-001",
      currency: "EUR",
      destination_country: "AT",
      archive_policy: "eu-central-6m",
    });
    expect(canonicalJson(invoice)).toBe(
      '{"currency":"EUR","document_type":"invoice","external_id":"Rechnung-Ä-ß-001","routing":{"archive_policy":"eu-central-6m","destination_country":"AT"},"schema_version":"2026-10-16"}',
    );
    expect(JSON.stringify(invoice)).toBe(canonicalJson(invoice));
    expect(invoiceJson({ ...invoice, routing: { ...invoice.routing } })).toBe(canonicalJson(invoice));
  });

  it("when an invoice holds any text at all, then its key is UUIDv5 of the id and the sha256 of canonicalJson, computed plainly", () => {
    // Quotes, backslashes, control characters, non-ASCII and lone surrogates take the general path; plain
    // ASCII the in-place one. Both must give the bytes of the specification.
    const text = fc.oneof(
      fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.string({ unit: fc.constantFrom('"', "\\", "\n", "\u0000", "é", "\ud800", "A", "-"), maxLength: 12 }),
    );
    const invoiceArb = fc.record({
      currency: text,
      document_type: text,
      external_id: text,
      routing: fc.record({ archive_policy: text, destination_country: text }),
      schema_version: text,
    });
    fc.assert(
      fc.property(invoiceArb, (invoice) => {
        const digest = createHash("sha256").update(canonicalJson(invoice), "utf8").digest("hex");
        const name = Buffer.from(`${invoice.external_id}\n${digest}`, "utf8");
        expect(deriveKey(invoice as CanonicalInvoice, ns)).toBe(uuidv5(name, ns.uuid));
      }),
      { numRuns: 3000 },
    );
  });
});
