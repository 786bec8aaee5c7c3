import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli, opsSetup, type OpsSetup } from "../cli/ops-support.js";
import { readReports } from "../support/drop.js";

const setups: OpsSetup[] = [];
afterEach(async () => {
  for (const s of setups.splice(0)) await s.cleanup();
});

/** The same five invoices, with non-ASCII ids, as three vendors would send them. */
const INVOICES = [
  { id: "SHAPE-Müller-1", currency: "EUR", country: "DE", name: "Deutschland", policy: "eu-10y" },
  { id: "SHAPE-Ærø-2", currency: "DKK", country: "DK", name: "Dänemark", policy: "eu-7y" },
  { id: "SHAPE-Straße-3", currency: "EUR", country: "AT", name: "Österreich", policy: "eu-10y" },
  { id: "SHAPE-Café-4", currency: "EUR", country: "FR", name: "Frankreich", policy: "eu-10y" },
  { id: "SHAPE-Plain-5", currency: "CHF", country: "CH", name: "Schweiz", policy: "eu-10y" },
];

const SOURCES = `profiles:
  - match: "sap-*.csv"
    delimiter: ";"
    encoding: windows-1252
    header_row: 3
    columns: { Rechnungsnummer: external_id, "Währung": currency, Land: destination_country, Aufbewahrung: archive_policy }
    values: { destination_country: { Deutschland: DE, "Dänemark": DK, "Österreich": AT, Frankreich: FR, Schweiz: CH } }
  - match: "erp-*.json"
    columns: { doc.no: external_id, doc.money.currency: currency, ship.country: destination_country }
    defaults: { archive_policy: eu-10y }
`;

function plainCsv(): string {
  const rows = INVOICES.map((i) => `${i.id},${i.currency},${i.country},${i.policy}`);
  return `external_id,currency,destination_country,archive_policy\n${rows.join("\n")}\n`;
}

function sapCsv(): Buffer {
  const rows = INVOICES.map((i) => `${i.id};${i.currency.toLowerCase()};${i.name};${i.policy}`);
  const text = `SAP FI Export;;;\r\nMandant 100;;;\r\nRechnungsnummer;Währung;Land;Aufbewahrung\r\n${rows.join("\r\n")}\r\n`;
  return Buffer.from(text, "latin1"); // every character here is the same in Windows-1252
}

function erpJson(): string {
  const docs = INVOICES.map((i) => ({
    doc: { no: i.id, money: { currency: i.currency } },
    ship: { country: i.country },
    ...(i.policy === "eu-10y" ? {} : { archive_policy: i.policy }),
  }));
  return JSON.stringify({ invoices: docs }, null, 2);
}

describe("the same invoices in three vendors' shapes", () => {
  it("when they are dropped as a plain CSV, then as an SAP-style CSV and a nested JSON through profiles, then all get the same keys, the later drops are all duplicate, and the service sees each invoice once", async () => {
    const s = await opsSetup();
    setups.push(s);
    await writeFile(join(s.dir, "sources.yaml"), SOURCES);
    await writeFile(join(s.dir, "plain.csv"), plainCsv());
    const first = await cli(["run"], s.env);
    expect(first.code, first.stderr).toBe(0);
    await writeFile(join(s.dir, "sap-night2.csv"), sapCsv());
    await writeFile(join(s.dir, "erp-night2.json"), erpJson());
    const second = await cli(["run"], s.env);
    expect(second.code, second.stderr).toBe(0);

    const reports = await readReports(s.dir);
    const keysOf = (name: string) =>
      (reports.get(name)?.rows ?? []).map((r) => [r.external_id, r.idempotency_key]);
    const statusesOf = (name: string) => (reports.get(name)?.rows ?? []).map((r) => r.status);
    expect(statusesOf("plain.csv")).toEqual(INVOICES.map(() => "succeeded"));
    expect(statusesOf("sap-night2.csv")).toEqual(INVOICES.map(() => "duplicate"));
    expect(statusesOf("erp-night2.json")).toEqual(INVOICES.map(() => "duplicate"));
    expect(keysOf("sap-night2.csv")).toEqual(keysOf("plain.csv"));
    expect(keysOf("erp-night2.json")).toEqual(keysOf("plain.csv"));
    expect((reports.get("sap-night2.csv")?.rows ?? []).map((r) => r.line)).toEqual([4, 5, 6, 7, 8]);
    const stats = s.sim.stats();
    expect(stats.requests.total).toBe(INVOICES.length);
    expect(stats.effects).toMatchObject({ total: INVOICES.length, keysWithMultipleEffects: 0 });
  });

  it("when the profiles file is edited while a batch read through it waits, then the batch is finished and reported with the profile it was ingested with", async () => {
    const s = await opsSetup();
    setups.push(s);
    await writeFile(join(s.dir, "sources.yaml"), SOURCES);
    await writeFile(join(s.dir, "sap-night1.csv"), sapCsv());
    const ingest = await cli(["ingest"], s.env);
    expect(ingest.code, ingest.stderr).toBe(0);
    // The vendor's words now map elsewhere and the header moved: read with this, the rows would change.
    await writeFile(
      join(s.dir, "sources.yaml"),
      SOURCES.replace("header_row: 3", "header_row: 1").replace("Deutschland: DE", "Deutschland: AT"),
    );
    const run = await cli(["run"], s.env);
    expect(run.code, run.stderr).toBe(0);
    const rows = (await readReports(s.dir)).get("sap-night1.csv")?.rows ?? [];
    expect(rows.map((r) => [r.line, r.external_id, r.status])).toEqual(
      INVOICES.map((i, n) => [n + 4, i.id, "succeeded"]),
    );
    expect(s.sim.stats().requests.total).toBe(INVOICES.length);
    expect(s.sim.stats().effects).toMatchObject({ total: INVOICES.length, keysWithMultipleEffects: 0 });
  });
});
