import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { formatFieldErrors } from "../../src/invoice/field-error.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import type { CanonicalInvoice } from "../../src/invoice/schema.js";
import { profileOf, readThrough } from "./profile-helpers.js";
import { keyOf, outline, readAll, rejectionAt, validAt } from "./read-helpers.js";

const csv = (...lines: string[]): string => lines.join("\n") + "\n";
const TINY = [1, 2, 3, 5, 7];

const GERMAN = profileOf({
  columns: {
    Rechnungsnummer: "external_id",
    Währung: "currency",
    Land: "destination_country",
    Aufbewahrung: "archive_policy",
  },
  defaults: { archive_policy: "eu-10y" },
  values: { destination_country: { Deutschland: "DE", Frankreich: "FR", Österreich: "AT" } },
});

/** A nested export with its own names: `invoice.number`, `invoice.money.currency`, `ship_to.country`. */
const NESTED = profileOf({
  columns: {
    "invoice.number": "external_id",
    "invoice.money.currency": "currency",
    "ship_to.country": "destination_country",
    "retention.policy": "archive_policy",
  },
});

const valid = (items: readonly ReadItem[]): Extract<ReadItem, { kind: "valid" }>[] =>
  items.flatMap((item) => (item.kind === "valid" ? [item] : []));

describe("CSV columns of a source profile", () => {
  it("when the profile names the columns, then they fill their fields, matched trimmed and case-insensitively", async () => {
    const text = csv(" RECHNUNGSNUMMER ;währung;Land;Aufbewahrung;Notiz", "INV-1;EUR;DE;eu-10y;x");
    const { items, header } = await readThrough(text, "csv", GERMAN, TINY);
    expect(outline(items)).toEqual(["valid@2", "unknown-fields"]);
    expect(validAt(items, 2).key).toBe(
      keyOf({ external_id: "INV-1", currency: "EUR", destination_country: "DE", archive_policy: "eu-10y" }),
    );
    expect(items.at(-1)).toEqual({ kind: "unknown-fields", names: ["Notiz"] });
    expect(header?.columns).toEqual([
      { name: " RECHNUNGSNUMMER ", field: "external_id" },
      { name: "währung", field: "currency" },
      { name: "Land", field: "destination_country" },
      { name: "Aufbewahrung", field: "archive_policy" },
      { name: "Notiz", field: undefined },
    ]);
  });

  it("when some columns are not in the profile, then they are matched by their own names as without one", async () => {
    const profile = profileOf({ columns: { Nr: "external_id" } });
    const text = csv("Nr,currency,routing.destination_country,archive_policy", "INV-1,eur,de,eu-10y");
    const { items } = await readThrough(text, "csv", profile);
    expect(validAt(items, 2).invoice).toMatchObject({ external_id: "INV-1", currency: "EUR" });
  });

  it("when the header lacks a column the profile has a default for, then the header is accepted and the default fills it", async () => {
    const text = csv("Rechnungsnummer;Währung;Land", "INV-1;EUR;Deutschland");
    const { items } = await readThrough(text, "csv", GERMAN);
    expect(validAt(items, 2).invoice.routing).toEqual({
      archive_policy: "eu-10y",
      destination_country: "DE",
    });
  });

  it("when neither a column nor a default fills a required field, then the file is rejected naming it", async () => {
    const { items } = await readThrough(
      csv("Rechnungsnummer;Währung;Aufbewahrung", "INV-1;EUR;eu-10y"),
      "csv",
      GERMAN,
    );
    const last = items.at(-1);
    expect(last?.kind === "file-error" ? last.error.problem : "").toContain(
      "lacks required column(s): destination_country",
    );
  });
});

describe("JSON paths of a source profile", () => {
  const element = (id: string, country: string, extra: object = {}): object => ({
    invoice: { number: id, date: "2026-11-23", money: { currency: "eur", amount: 10 } },
    ship_to: { country, city: "Köln" },
    retention: { policy: "eu-10y" },
    ...extra,
  });

  it.each(["json", "ndjson"] as const)(
    "when the profile maps dotted paths (%s), then they fill their fields and the other names are unknown",
    async (format) => {
      const elements = [element("INV-1", "DE"), element("INV-2", "FR", { Routing: { document_type: "x" } })];
      const text =
        format === "json" ? JSON.stringify(elements) : elements.map((e) => JSON.stringify(e)).join("\n");
      const { items } = await readThrough(text, format, NESTED, TINY);
      expect(outline(items)).toEqual(["valid@1", "valid@2", "unknown-fields"]);
      expect(validAt(items, 2).key).toBe(
        keyOf({ external_id: "INV-2", currency: "EUR", destination_country: "FR", archive_policy: "eu-10y" }),
      );
      const last = items.at(-1);
      expect(last?.kind === "unknown-fields" ? [...last.names].sort() : []).toEqual([
        "Routing.document_type",
        "invoice.date",
        "invoice.money.amount",
        "ship_to.city",
      ]);
    },
  );

  it("when path segments differ in case, or a name outside the paths is a field's own, then both are matched", async () => {
    const record = {
      INVOICE: { Number: "INV-1", Money: { CURRENCY: "EUR" } },
      Ship_To: { Country: "DE" },
      routing: { archive_policy: "eu-10y" },
    };
    const { items } = await readThrough(JSON.stringify(record), "ndjson", NESTED);
    expect(validAt(items, 1).invoice).toMatchObject({
      external_id: "INV-1",
      routing: { archive_policy: "eu-10y", destination_country: "DE" },
    });
  });

  it("when a mapped path is missing, then the record is rejected naming the path and the field", async () => {
    const { items } = await readThrough(
      JSON.stringify({
        invoice: { money: { currency: "EUR" } },
        ship_to: { country: "DE" },
        retention: { policy: "eu-10y" },
      }),
      "ndjson",
      NESTED,
    );
    expect(formatFieldErrors(rejectionAt(items, 1).errors)).toBe(
      'column "invoice.number" (external_id): is required',
    );
  });
});

describe("defaults and values of a source profile", () => {
  it("when a value is blank or absent, then the default fills it; a value given is kept", async () => {
    const profile = profileOf({ defaults: { archive_policy: "eu-10y", currency: "EUR" } });
    const lines = ["external_id;currency;destination_country;archive_policy", "A;;DE;", "B; ;DE;us-7y"];
    const { items } = await readThrough(csv(...lines), "csv", profile);
    expect(validAt(items, 2).invoice).toMatchObject({
      currency: "EUR",
      routing: { archive_policy: "eu-10y" },
    });
    expect(validAt(items, 3).invoice).toMatchObject({
      currency: "EUR",
      routing: { archive_policy: "us-7y" },
    });
    const json = await readThrough(
      JSON.stringify([{ external_id: "C", destination_country: "DE", currency: null }]),
      "json",
      profile,
    );
    expect(validAt(json.items, 1).invoice).toMatchObject({
      currency: "EUR",
      routing: { archive_policy: "eu-10y" },
    });
  });

  it("when a value is one of the vendor's words, then it becomes ours; another value is validated as without a profile", async () => {
    const text = csv(
      "Rechnungsnummer;Währung;Land;Aufbewahrung",
      "INV-1;EUR; Deutschland ;eu-10y",
      "INV-2;EUR;deutschland;eu-10y",
      "INV-3;EUR;fr;eu-10y",
      "INV-4;EUR;Germny;eu-10y",
    );
    const { items } = await readThrough(text, "csv", GERMAN);
    expect(outline(items)).toEqual(["valid@2", "rejected@3", "valid@4", "rejected@5"]);
    expect(validAt(items, 2).invoice.routing.destination_country).toBe("DE");
    expect(rejectionAt(items, 3).errors[0]).toMatchObject({ value: "deutschland" });
  });
});

describe("errors through a source profile", () => {
  it("when a mapped column's value is invalid, then the error names the vendor's column and the canonical field", async () => {
    const text = csv(
      "Rechnungsnummer;Währung;Land;Aufbewahrung",
      "INV-1;EUR;Germny;eu-10y",
      "INV-2;EURO;DE;eu-10y",
    );
    const { items } = await readThrough(text, "csv", GERMAN);
    expect(rejectionAt(items, 2).errors).toEqual([
      {
        field: "routing.destination_country",
        column: "Land",
        value: "Germny",
        reason: "must be an assigned ISO 3166-1 alpha-2 country code such as DE or US",
      },
    ]);
    expect(formatFieldErrors(rejectionAt(items, 2).errors)).toBe(
      'column "Land" (routing.destination_country): must be an assigned ISO 3166-1 alpha-2 country code such as DE or US (got "Germny")',
    );
    expect(formatFieldErrors(rejectionAt(items, 3).errors)).toMatch(
      /^column "Währung" \(currency\): must be an ISO 4217/,
    );
  });

  it("when a JSON path's value is invalid, then the error names the path", async () => {
    const record = {
      invoice: { number: "INV-1", money: { currency: "EUR" } },
      ship_to: { country: "Germny" },
      retention: { policy: "eu-10y" },
    };
    const { items } = await readThrough(JSON.stringify([record]), "json", NESTED);
    expect(formatFieldErrors(rejectionAt(items, 1).errors)).toMatch(
      /^column "ship_to.country" \(routing.destination_country\): /,
    );
  });

  it("when a default fills a mapped column's blank cell and is itself invalid, then the error does not blame the column", async () => {
    const profile = profileOf({
      columns: { Archiv: "archive_policy" },
      defaults: { archive_policy: "ten years" },
    });
    const { items } = await readThrough(
      csv("external_id,currency,destination_country,Archiv", "A,EUR,DE,"),
      "csv",
      profile,
    );
    expect(rejectionAt(items, 2).errors[0]).not.toHaveProperty("column");
  });

  it("when a file is read without a profile, then its errors name the canonical field alone, as before", async () => {
    const items = await readAll(
      csv("external_id,currency,destination_country,archive_policy", "A,EUR,Germny,eu-10y"),
      "csv",
    );
    expect(formatFieldErrors(rejectionAt(items, 2).errors)).toBe(
      'routing.destination_country: must be an assigned ISO 3166-1 alpha-2 country code such as DE or US (got "Germny")',
    );
  });
});

describe("the same invoices from differently shaped files", () => {
  /** The valid invoices of the plain sample CSV, as a comma file without a profile reads them. */
  async function sampleInvoices(): Promise<{ invoice: CanonicalInvoice; key: string }[]> {
    const items = await readAll(await readFile("samples/invoices-eu.csv"), "csv");
    return valid(items).map(({ invoice, key }) => ({ invoice, key }));
  }

  const WORDS: Readonly<Record<string, string>> = { DE: "Deutschland", FR: "Frankreich", AT: "Österreich" };

  /** Semicolons, German names in another order, the vendor's country words, the default policy left blank. */
  function germanCsv(invoices: readonly CanonicalInvoice[]): string {
    const cell = (text: string): string => (/[;"\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
    const rows = invoices.map((i) => {
      const policy = i.routing.archive_policy === "eu-10y" ? "" : i.routing.archive_policy;
      const country = WORDS[i.routing.destination_country] ?? i.routing.destination_country;
      return [policy, country, cell(i.external_id), i.currency].join(";");
    });
    return ["Aufbewahrung;Land;Rechnungsnummer;Währung", ...rows].join("\r\n") + "\r\n";
  }

  function nestedJson(invoices: readonly CanonicalInvoice[]): string {
    return JSON.stringify({
      invoices: invoices.map((i) => ({
        invoice: { number: i.external_id, money: { currency: i.currency.toLowerCase() } },
        ship_to: { country: i.routing.destination_country },
        retention: { policy: i.routing.archive_policy },
      })),
    });
  }

  it("when the sample's invoices come as a German semicolon CSV and as a nested JSON, then documents and keys are the sample's", async () => {
    const sample = await sampleInvoices();
    expect(sample.length).toBeGreaterThan(3);
    const invoices = sample.map(({ invoice }) => invoice);
    const german = await readThrough(germanCsv(invoices), "csv", GERMAN, TINY);
    const nested = await readThrough(nestedJson(invoices), "json", NESTED, [64]);
    for (const read of [german.items, nested.items]) {
      expect(read.filter((item) => item.kind !== "valid")).toEqual([]);
      expect(valid(read).map(({ invoice, key }) => ({ invoice, key }))).toEqual(sample);
    }
    expect(german.header).toMatchObject({ delimiter: ";", detected: true });
  });

  it("when the German file comes without its profile, then it is rejected as a whole", async () => {
    const { items } = await readThrough(
      germanCsv((await sampleInvoices()).map(({ invoice }) => invoice)),
      "csv",
    );
    expect(items).toHaveLength(1);
    expect(items.at(-1)?.kind).toBe("file-error");
  });
});
