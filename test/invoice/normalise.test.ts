import { describe, expect, it } from "vitest";
import { COUNTRY_CODES, CURRENCY_CODES } from "../../src/invoice/iso-codes.js";
import { normaliseRecord } from "../../src/invoice/normalise.js";

const good = { external_id: "INV-1", currency: "eur", destination_country: "de", archive_policy: "EU-10Y" };

function errorsOf(record: unknown) {
  const result = normaliseRecord(record);
  return result.ok ? [] : result.errors;
}

describe("normalising a record into the canonical invoice", () => {
  it("when a record is valid, then strings are trimmed and currency, country and policy are cased", () => {
    const result = normaliseRecord({ ...good, external_id: "  INV-1  " });
    expect(result).toMatchObject({
      ok: true,
      invoice: {
        currency: "EUR",
        document_type: "invoice",
        external_id: "INV-1",
        routing: { archive_policy: "eu-10y", destination_country: "DE" },
        schema_version: "2026-10-16",
      },
    });
  });

  it("when schema_version is another version, then the record is rejected as unsupported", () => {
    expect(errorsOf({ ...good, schema_version: "2025-01-01" })).toEqual([
      {
        field: "schema_version",
        value: "2025-01-01",
        reason: "unsupported version: only 2026-10-16 is supported",
      },
    ]);
  });

  it("when document_type is not invoice, then the record is rejected", () => {
    expect(errorsOf({ ...good, document_type: "credit_note" })[0]).toMatchObject({
      field: "document_type",
      value: "credit_note",
    });
  });

  it.each(["EURO", "XYZ", "HRK", "12", ""])(
    "when currency is %j, then it is rejected naming the field",
    (currency) => {
      expect(errorsOf({ ...good, currency })[0]?.field).toBe("currency");
    },
  );

  it.each(["ZZ", "XK", "EU", "UK", "QO", "D", "DEU", "YU"])(
    "when destination_country is %j (not assigned by ISO), then it is rejected",
    (country) => {
      expect(errorsOf({ ...good, destination_country: country })[0]?.field).toBe(
        "routing.destination_country",
      );
    },
  );

  it.each(["eu-10y", "us-east-7y", "ap-northeast-1-30d", "x-1m"])(
    "when archive_policy is %j, then it is accepted",
    (policy) => {
      expect(errorsOf({ ...good, archive_policy: policy })).toEqual([]);
    },
  );

  it.each(["eu", "eu-0y", "eu-10w", "-10y", "eu--10y", "eu-10", "eu_x-10y", "10y", "eu-01y"])(
    "when archive_policy is %j, then it is rejected",
    (policy) => {
      expect(errorsOf({ ...good, archive_policy: policy })[0]?.field).toBe("routing.archive_policy");
    },
  );

  it("when external_id is too long, empty or has a control character, then it is rejected", () => {
    expect(errorsOf({ ...good, external_id: "x".repeat(256) })[0]?.reason).toMatch(/255/);
    expect(errorsOf({ ...good, external_id: "   " })[0]?.reason).toBe("is required");
    expect(errorsOf({ ...good, external_id: "a\u0007b" })[0]).toMatchObject({
      field: "external_id",
      value: "a\\u0007b",
    });
  });

  it("when numbers stand where strings belong, then each field is named with what it got", () => {
    const errors = errorsOf({
      external_id: 42,
      currency: 978,
      destination_country: "DE",
      archive_policy: "eu-10y",
    });
    expect(errors.map((e) => e.field).sort()).toEqual(["currency", "external_id"]);
    expect(errors[0]?.reason).toMatch(/must be a string, not a number/);
  });

  it("when required fields are missing, then each is reported as required", () => {
    expect(
      errorsOf({})
        .map((e) => `${e.field}: ${e.reason}`)
        .sort(),
    ).toEqual([
      "currency: is required",
      "external_id: is required",
      "routing.archive_policy: is required",
      "routing.destination_country: is required",
    ]);
  });

  it("when routing is not an object, then the record is rejected naming routing", () => {
    expect(errorsOf({ ...good, routing: "DE" })).toContainEqual(
      expect.objectContaining({ field: "routing" }),
    );
  });

  it("when flat and nested forms disagree, then the record is rejected rather than guessed", () => {
    const errors = errorsOf({ ...good, routing: { destination_country: "FR" } });
    expect(errors[0]).toMatchObject({ field: "routing.destination_country" });
  });

  it("when a record has unknown fields, then they are ignored and listed", () => {
    const result = normaliseRecord({ ...good, amount: 12, routing: { priority: "high" } });
    expect(result.ok).toBe(true);
    expect(result.unknown).toEqual(["amount", "routing.priority"]);
  });

  it("when a value is very long, then the error shows it shortened", () => {
    const value = errorsOf({ ...good, currency: "E".repeat(500) })[0]?.value ?? "";
    expect(value.length).toBeLessThanOrEqual(61);
    expect(value.endsWith("…")).toBe(true);
  });
});

describe("ISO code lists", () => {
  it("when the country list is built from Intl, then it has exactly the 249 assigned ISO 3166-1 codes", () => {
    expect(COUNTRY_CODES.size).toBe(249);
    expect(["DE", "US", "JP", "SS", "CW", "BQ", "AQ"].filter((code) => !COUNTRY_CODES.has(code))).toEqual([]);
  });

  it("when the currency list is built from Intl, then common codes are in and withdrawn ones are out", () => {
    const current = ["EUR", "USD", "JPY", "CHF", "XOF", "SLE", "ZWG", "XCG"];
    expect(current.filter((code) => !CURRENCY_CODES.has(code))).toEqual([]);
    expect(["HRK", "ZWL", "CUC", "XYZ"].filter((code) => CURRENCY_CODES.has(code))).toEqual([]);
  });
});
