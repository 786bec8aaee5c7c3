import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseReport } from "../support/drop.js";
import { cli, opsSetup, type OpsSetup } from "./ops-support.js";

// Cells a spreadsheet would run as formulas (docs/operations.md, "Reports in a spreadsheet").
const DANGEROUS = ['=HYPERLINK("http://x","y")', "@SUM(1+1)", "+1", "-2+3"];
const HARMLESS = ["ACME, Ltd 7", "PLAIN-8"];
const quoted = (text: string): string => `"${text.replaceAll('"', '""')}"`;
/** The cell as the CSV writers must put it: quoted, with a leading `'` so it reads as text. */
const neutral = (text: string): string => quoted(`'${text}`);

describe("reports and results of invoices whose text a spreadsheet would run as a formula", () => {
  let setup: OpsSetup;
  let batchId: string;
  let reportPath: string;

  beforeAll(async () => {
    // The service echoes external_id in its answer; reading the correlation ID from that field makes
    // it service-provided text that starts with a formula character.
    setup = await opsSetup(
      {},
      { CORRELATION_ID_HEADERS: "x-not-sent", CORRELATION_ID_FIELDS: "external_id" },
    );
    const rows = [...DANGEROUS, ...HARMLESS].map((id) => `${quoted(id)},EUR,DE,eu-10y`);
    const body = ["external_id,currency,destination_country,archive_policy", ...rows, "@BAD,XYZ,DE,eu-1y"];
    await writeFile(join(setup.dir, "formulas.csv"), `${body.join("\n")}\n`);
    const run = await cli(["run"], setup.env);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    const report = (await readdir(join(setup.dir, "reports"))).find((n) => n.endsWith(".results.csv")) ?? "";
    reportPath = join(setup.dir, "reports", report);
    batchId = report.slice("formulas.csv.".length, -".results.csv".length);
  });
  afterAll(() => setup.cleanup());

  it("when run writes the report, then external_id and correlation_id cells starting with = + - @ are quoted text with a leading quote, and others are unchanged", async () => {
    const text = await readFile(reportPath, "utf8");
    const rows = parseReport(text).rows;
    expect(rows.map((r) => r.status)).toEqual([
      ...DANGEROUS.map(() => "succeeded"),
      "succeeded",
      "succeeded",
      "rejected",
    ]);
    for (const [i, id] of DANGEROUS.entries()) {
      expect(rows[i]).toMatchObject({ external_id: `'${id}`, correlation_id: `'${id}` });
      expect(text).toContain(`,${neutral(id)},${rows[i]?.idempotency_key},succeeded,201,${neutral(id)},`);
    }
    expect(rows[4]).toMatchObject({ external_id: "ACME, Ltd 7", correlation_id: "ACME, Ltd 7" });
    expect(rows[5]).toMatchObject({ external_id: "PLAIN-8", correlation_id: "PLAIN-8", line: 7 });
    expect(text).toContain("\r\n7,PLAIN-8,");
    expect(rows[6]).toMatchObject({ external_id: "'@BAD", status: "rejected" });
  });

  it("when results --batch is asked as csv, then it prints the neutralised report, and as jsonl the raw values", async () => {
    const csv = await cli(["results", "--batch", batchId], setup.env);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe(await readFile(reportPath, "utf8"));
    expect(
      parseReport(csv.stdout)
        .rows.map((r) => r.external_id)
        .slice(0, 4),
    ).toEqual(DANGEROUS.map((id) => `'${id}`));

    const jsonl = await cli(["results", "--batch", batchId, "--format", "jsonl"], setup.env);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const rows = jsonLines(jsonl.stdout);
    expect(rows.map((r) => r["external_id"])).toEqual([...DANGEROUS, ...HARMLESS, "@BAD"]);
    expect(rows.slice(0, 6).map((r) => r["correlation_id"])).toEqual([...DANGEROUS, ...HARMLESS]);
  });

  it("when results exports every record as csv, then the dangerous cells are neutralised, and as jsonl they are raw", async () => {
    const csv = await cli(["results"], setup.env);
    expect(csv.code, csv.stderr).toBe(0);
    for (const id of DANGEROUS)
      expect(csv.stdout).toMatch(new RegExp(`,${escape(neutral(id))},succeeded,201,${escape(neutral(id))},`));
    expect(csv.stdout).toMatch(/,PLAIN-8,succeeded,201,PLAIN-8,/);
    expect(csv.stdout.split("\r\n").filter((l) => /(^|,)[=+\-@]/.test(l))).toEqual([]);

    const jsonl = await cli(["results", "--format", "jsonl"], setup.env);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const ids = jsonLines(jsonl.stdout).map((r) => [r["external_id"], r["correlation_id"]]);
    expect(ids.sort()).toEqual([...DANGEROUS, ...HARMLESS].map((id) => [id, id]).sort());
  });
});

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .trimEnd()
    .split("\n")
    .map((l) => z.record(z.string(), z.unknown()).parse(JSON.parse(l)));
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
