// npm run bench:console — how fast the web console pages through a 1,000,000-row batch: its rows come
// from the batch's report CSV (src/results/row-pages.ts), read from the nearest checkpoint of an index
// built as pages are read. One report of CONSOLE_ROWS rows (1 % failed, spread evenly) is written to a
// temporary folder; each figure is one page of 100 rows, as the batch page asks for.
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { resolveNamespace } from "../src/invoice/key.js";
import { BatchStore, type BatchMeta } from "../src/ledger/batch-store.js";
import { RedisLedger } from "../src/ledger/redis-ledger.js";
import { csvLine, REPORT_HEADER, type ReportRow } from "../src/results/report-row.js";
import { RowPages, type RowPageQuery } from "../src/results/row-pages.js";
import { fileName } from "../src/names/file-name.js";

const ROWS = Number(process.env["CONSOLE_ROWS"] ?? 1_000_000);
const PAGE = 100;

function row(i: number): ReportRow {
  const failed = i % 100 === 42;
  return {
    line: i + 2,
    external_id: `ACME-2026-${String(i).padStart(7, "0")}`,
    idempotency_key: `0b7f3a52-6c1d-5e8f-9a0b-${String(i).padStart(12, "0")}`,
    status: failed ? "failed" : "succeeded",
    http_status: failed ? "422" : "201",
    correlation_id: `req-${i.toString(36)}`,
    ruleset_version: "2026.11",
    attempts: "1",
    error: failed ? "HTTP 422: the invoice was refused by the routing rules" : "",
  };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "invoice-relay-console-bench-"));
  const report = join(dir, "big.csv.results.csv");
  const out = createWriteStream(report);
  out.write(`${REPORT_HEADER.join(",")}\r\n`);
  for (let i = 0; i < ROWS; i++) if (!out.write(csvLine(row(i)))) await once(out, "drain");
  out.end();
  await once(out, "finish");
  const rssBefore = process.memoryUsage().rss;
  // Reported batches never touch Redis; the connection is never opened.
  const redis = new Redis({ lazyConnect: true });
  const pages = new RowPages({
    ledger: new RedisLedger(redis, "bench"),
    batches: new BatchStore(redis, "bench"),
    namespace: resolveNamespace(undefined),
  });
  const file = fileName("big.csv");
  if (file === undefined) throw new Error("big.csv is one path segment");
  const batch: BatchMeta = {
    id: "bench",
    file,
    format: "csv",
    path: join(dir, "big.csv"),
    state: "reported",
    created_at: 0,
    report_csv: report,
  };
  const timed = async (what: string, query: Omit<RowPageQuery, "limit">) => {
    const started = process.hrtime.bigint();
    const page = await pages.page(batch, { ...query, limit: PAGE });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    process.stdout.write(`${what.padEnd(52)} ${ms.toFixed(1).padStart(8)} ms  (${page.rows.length} rows)\n`);
    return ms;
  };
  process.stdout.write(`report of ${ROWS.toLocaleString("en")} rows, pages of ${PAGE}\n`);
  const first = await timed("first page", { after: 0 });
  const deepCold = await timed("page after line 900,000, first time (builds the index)", { after: 900_000 });
  const deepWarm = await timed("page after line 900,000, again", { after: 900_000 });
  const lastWarm = await timed(`page after line ${(ROWS - 50).toLocaleString("en")}`, { after: ROWS - 50 });
  const failedFirst = await timed("first page of failed rows (1 in 100)", { after: 0, status: "failed" });
  const failedDeep = await timed("failed rows after line 500,000", { after: 500_000, status: "failed" });
  const rss = process.memoryUsage().rss;
  process.stdout.write(
    `RSS ${(rss / 1e6).toFixed(0)} MB (${(rssBefore / 1e6).toFixed(0)} MB before the first page)\n`,
  );
  process.stdout.write(
    `${JSON.stringify({
      rows: ROWS,
      first_page_ms: Math.round(first),
      deep_page_cold_ms: Math.round(deepCold),
      deep_page_warm_ms: Math.round(deepWarm),
      last_page_warm_ms: Math.round(lastWarm),
      failed_first_page_ms: Math.round(failedFirst),
      failed_deep_page_ms: Math.round(failedDeep),
      rss_mb: Math.round(rss / 1e6),
    })}\n`,
  );
  redis.disconnect();
  await rm(dir, { recursive: true, force: true });
}

await main();
