import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport, readReports, summarySchema } from "../support/drop.js";
import { testInvoice, type KeyedInvoice } from "../support/invoices.js";
import { cli, opsSetup, poisonKey, type OpsSetup } from "./ops-support.js";

const setups: OpsSetup[] = [];
afterEach(async () => {
  for (const s of setups.splice(0)) await s.cleanup();
});

const HEADER = "external_id,currency,destination_country,archive_policy";
const csvRow = ({ invoice: i }: KeyedInvoice): string =>
  `${i.external_id},${i.currency},${i.routing.destination_country},${i.routing.archive_policy}`;

describe("an invoice that appears twice in one file", () => {
  it("when its first occurrence fails, then every later occurrence is failed too, with the same error, and run exits 2", async () => {
    const s = await opsSetup();
    setups.push(s);
    const tag = `dup-${randomUUID()}`;
    const [a, b] = [testInvoice(1, tag), testInvoice(2, tag)];
    // The service refuses a's key for good (422: used with another body).
    await poisonKey(s.sim, a.key, testInvoice(99, `other-${randomUUID()}`).invoice);
    // 500 rejected rows put the last copy of a in a later chunk of the report than the first one.
    const bad = Array.from({ length: 500 }, (_, i) => `BAD-${i},XYZ,DE,eu-1y`);
    await writeFile(
      join(s.dir, "twice.csv"),
      `${[HEADER, csvRow(a), csvRow(a), csvRow(b), ...bad, csvRow(a)].join("\n")}\n`,
    );

    const run = await cli(["run"], s.env);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    const report = (await readReports(s.dir)).get("twice.csv");
    const rows = report?.rows ?? [];
    const [first, second, third] = [2, 3, 505].map((line) => rows.find((r) => r.line === line));
    expect(first).toMatchObject({ status: "failed", http_status: "422", idempotency_key: a.key });
    expect(first?.error).toMatch(/^HTTP 422: /);
    for (const [copy, line] of [
      [second, 3],
      [third, 505],
    ] as const) {
      expect(copy, `line ${line}`).toMatchObject({
        status: "failed",
        http_status: "422",
        idempotency_key: a.key,
        error: `same invoice as line 2: ${first?.error ?? ""}`,
      });
    }
    expect(rows.find((r) => r.line === 4)?.status).toBe("succeeded");
    expect(summarySchema.parse(report?.summary).counts).toMatchObject({
      succeeded: 1,
      failed: 3,
      duplicate: 0,
      rejected: 500,
    });
    // b's, and the poisoning request's: the relay's copies of a took none
    expect(s.sim.stats().effects.total).toBe(2);
  });

  it("when its first occurrence is a conflict with an earlier file, then the later occurrence is a conflict too, and run exits 2", async () => {
    const s = await opsSetup();
    setups.push(s);
    const id = `CONF-${randomUUID()}`;
    await writeFile(join(s.dir, "night1.csv"), `${HEADER}\n${id},EUR,DE,eu-10y\n`);
    const night1 = await cli(["run"], s.env);
    expect(night1.code, night1.stdout + night1.stderr).toBe(0);

    // The same external_id with other content, twice: not sent, a business decision for a human.
    await writeFile(join(s.dir, "night2.csv"), `${HEADER}\n${id},EUR,DE,eu-7y\n${id},EUR,DE,eu-7y\n`);
    const night2 = await cli(["run"], s.env);
    expect(night2.code, night2.stdout + night2.stderr).toBe(2);
    const reports = [...(await readReports(s.dir)).entries()];
    const rows = reports.find(([name]) => name === "night2.csv")?.[1].rows ?? [];
    expect(rows.map((r) => [r.line, r.status])).toEqual([
      [2, "conflict"],
      [3, "conflict"],
    ]);
    expect(rows[1]?.error).toBe(`same invoice as line 2: ${rows[0]?.error ?? ""}`);
    expect(rows[1]?.error).toMatch(/not sent$/);
    expect(s.sim.stats().effects.total).toBe(1);
  });

  it("when its first occurrence succeeds, then the later occurrence is a duplicate with its correlation ID, and run exits 0", async () => {
    const s = await opsSetup();
    setups.push(s);
    const a = testInvoice(1, `ok-${randomUUID()}`);
    await writeFile(join(s.dir, "ok.csv"), `${[HEADER, csvRow(a), csvRow(a)].join("\n")}\n`);
    const run = await cli(["run"], s.env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const reportName = (await readdir(join(s.dir, "reports"))).find((n) => n.endsWith(".results.csv"));
    const batch = reportName?.slice("ok.csv.".length, -".results.csv".length) ?? "";
    const results = await cli(["results", "--batch", batch], s.env);
    const rows = parseReport(results.stdout).rows;
    expect(rows.map((r) => r.status)).toEqual(["succeeded", "duplicate"]);
    expect(rows[1]).toMatchObject({
      correlation_id: rows[0]?.correlation_id,
      error: "same invoice as line 2",
    });
    expect(rows[0]?.correlation_id).not.toBe("");
  });
});
