import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveNamespace } from "../../src/invoice/key.js";
import { BatchStore, type BatchMeta } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { csvLine, REPORT_HEADER, type ReportRow } from "../../src/results/report-row.js";
import { RowPages } from "../../src/results/row-pages.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { segment } from "../support/file-names.js";

const redis = testRedis();
let dir: string;
let report: string;
const ROWS = 2500;

function row(i: number): ReportRow {
  const line = i + 2;
  return {
    line,
    external_id: i === 7 ? `=HYPERLINK("x"),\n"quoted"` : `INV-${i}`,
    idempotency_key: `key-${i}`,
    status: i % 10 === 3 ? "failed" : "succeeded",
    http_status: i % 10 === 3 ? "422" : "201",
    correlation_id: `c-${i}`,
    ruleset_version: "r1",
    attempts: "1",
    error: i % 10 === 3 ? "refused, with a comma" : "",
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "row-pages-"));
  report = join(dir, "a.csv.b.results.csv");
  const lines = [`${REPORT_HEADER.join(",")}\r\n`];
  for (let i = 0; i < ROWS; i++) lines.push(csvLine(row(i)));
  await writeFile(report, lines.join(""));
});
afterAll(async () => {
  redis.disconnect();
  await rm(dir, { recursive: true, force: true });
});

function pages(): RowPages {
  const prefix = testPrefix();
  return new RowPages({
    ledger: new RedisLedger(redis, prefix),
    batches: new BatchStore(redis, prefix),
    namespace: resolveNamespace(undefined),
  });
}

const batch: BatchMeta = {
  id: "b",
  file: segment("a.csv"),
  format: "csv",
  path: "/nowhere/a.csv",
  state: "reported",
  created_at: 0,
  report_csv: "",
};

describe("pages of a reported batch's rows", () => {
  it("when pages are followed by their cursor, then every row comes once, in order, as the report wrote it", async () => {
    const p = pages();
    const meta = { ...batch, report_csv: report };
    const seen: ReportRow[] = [];
    let after = 0;
    for (;;) {
      const page = await p.page(meta, { after, limit: 300 });
      expect(page.source).toBe("report");
      seen.push(...page.rows);
      if (page.next === undefined) break;
      after = page.next;
    }
    expect(seen.map((r) => r.line)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 2));
    expect(seen[7]).toEqual(row(7));
    expect(seen[13]).toEqual(row(13));
  });

  it("when a page far into the report is asked twice, then it starts after the cursor both times (read from a checkpoint the second time)", async () => {
    const p = pages();
    const meta = { ...batch, report_csv: report };
    const first = await p.page(meta, { after: 2100, limit: 5 });
    const again = await p.page(meta, { after: 2100, limit: 5 });
    expect(first.rows.map((r) => r.line)).toEqual([2101, 2102, 2103, 2104, 2105]);
    expect(again).toEqual(first);
    expect(first.next).toBe(2105);
  });

  it("when only failed rows are asked, then the page holds failed rows after the cursor only", async () => {
    const p = pages();
    const page = await p.page({ ...batch, report_csv: report }, { status: "failed", after: 1000, limit: 4 });
    expect(page.rows.map((r) => r.line)).toEqual([1005, 1015, 1025, 1035]);
    expect(page.rows.every((r) => r.status === "failed")).toBe(true);
    const last = await p.page({ ...batch, report_csv: report }, { status: "failed", after: 2490, limit: 4 });
    expect(last.rows.map((r) => r.line)).toEqual([2495]);
    expect(last.next).toBeUndefined();
  });
});
