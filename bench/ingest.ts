// npm run bench:ingest — reads + validates + keys a 1,000,000-row CSV, the same rows as a vendor's CSV read
// through a source profile, and a 200,000-element JSON array.
import { execFile } from "node:child_process";
import { hash } from "node:crypto";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";
import { RedisServer } from "../src/dev/redis-server.js";
import { INGEST_CHUNKS_IN_FLIGHT } from "../src/ingest/ingest-file.js";
import { profileYaml, writeCsv, writeJsonArray, writeVendorCsv } from "./generate.js";
import { measureEnqueue } from "./ingest-enqueue.js";

const CSV_ROWS = Number(process.env["BENCH_CSV_ROWS"] ?? 1_000_000);
const JSON_ROWS = Number(process.env["BENCH_JSON_ROWS"] ?? 200_000);
const ENQUEUE_ROWS = Number(process.env["BENCH_ENQUEUE_ROWS"] ?? 200_000);

const childResult = z.object({
  rows: z.number(),
  seconds: z.number(),
  peakRssMb: z.number(),
  counts: z.record(z.string(), z.number()),
});

async function measure(file: string, sources?: string): Promise<z.infer<typeof childResult>> {
  const child = fileURLToPath(new URL("./ingest-read.js", import.meta.url));
  const args = [child, file, ...(sources === undefined ? [] : [sources])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20 });
  return childResult.parse(JSON.parse(stdout));
}

/**
 * A fixed CPU task (1,000,000 sha256 of short strings), timed: this virtual machine's speed varies from
 * hour to hour, and figures taken at different speeds only compare through it.
 */
function machineSpeedMs(): number {
  const started = performance.now();
  for (let i = 0; i < 1_000_000; i++) hash("sha256", `invoice-relay ${i}`, "hex");
  return Math.round(performance.now() - started);
}

const speedMs = machineSpeedMs();
console.log(`machine speed: 1M sha256 in ${speedMs} ms (lower is faster)`);
const dir = await mkdtemp(join(tmpdir(), "invoice-relay-bench-"));
try {
  const csv = join(dir, "bench.csv");
  const json = join(dir, "bench.json");
  const vendor = join(dir, "sap-bench.csv");
  const sources = join(dir, "sources.yaml");
  await writeCsv(csv, CSV_ROWS);
  await writeJsonArray(json, JSON_ROWS);
  await writeVendorCsv(vendor, CSV_ROWS);
  await writeFile(sources, profileYaml("sap-*.csv"));
  const mb = async (p: string) => ((await stat(p)).size / 1e6).toFixed(1);
  console.log(
    `generated ${CSV_ROWS} CSV rows (${await mb(csv)} MB) and ${JSON_ROWS} JSON elements (${await mb(json)} MB) in ${dir}`,
  );

  const c = await measure(csv);
  const p = await measure(vendor, sources);
  const j = await measure(json);
  const csvRate = Math.round(c.rows / c.seconds);
  const jsonRate = Math.round(j.rows / j.seconds);
  console.log(
    `CSV : ${c.rows} rows in ${c.seconds.toFixed(2)} s = ${csvRate} rows/s, peak RSS ${c.peakRssMb.toFixed(0)} MB`,
  );
  const profileRate = Math.round(p.rows / p.seconds);
  console.log(
    `CSV through a profile (semicolons, Windows-1252, preamble, column and value maps): ${p.rows} rows in ` +
      `${p.seconds.toFixed(2)} s = ${profileRate} rows/s (${(profileRate / csvRate).toFixed(2)}× the plain CSV), ` +
      `peak RSS ${p.peakRssMb.toFixed(0)} MB`,
  );
  console.log(
    `JSON: ${j.rows} rows in ${j.seconds.toFixed(2)} s = ${jsonRate} rows/s, peak RSS ${j.peakRssMb.toFixed(0)} MB`,
  );
  if (c.counts["valid"] !== CSV_ROWS || p.counts["valid"] !== CSV_ROWS || j.counts["valid"] !== JSON_ROWS)
    throw new Error(`unexpected counts: ${JSON.stringify([c.counts, p.counts, j.counts])}`);

  const redis = process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
  const e = await measureEnqueue(process.env["REDIS_URL"] ?? redis?.url ?? "", dir, ENQUEUE_ROWS).finally(
    () => redis?.dispose(),
  );
  const enqueueRate = Math.round(e.rows / e.enqueueSeconds);
  const rawRate = Math.round(e.rows / e.rawSeconds);
  const pipelinedRate = Math.round(e.rows / e.rawPipelinedSeconds);
  console.log(
    `enqueue: ${e.rows} rows claimed, checked and enqueued in ${e.enqueueSeconds.toFixed(2)} s = ${enqueueRate} rows/s; ` +
      `raw BullMQ addBulk of the same jobs ${e.rawSeconds.toFixed(2)} s = ${rawRate} rows/s (ratio ${(enqueueRate / rawRate).toFixed(2)}; ` +
      `Redis ${redis === undefined ? "from REDIS_URL" : "private, AOF everysec"})`,
  );
  console.log(
    `  raw addBulk with ${INGEST_CHUNKS_IN_FLIGHT} chunks under way, as ingest keeps them: ${e.rawPipelinedSeconds.toFixed(2)} s = ` +
      `${pipelinedRate} rows/s (ratio ${(enqueueRate / pipelinedRate).toFixed(2)}; ingest also registers every row, in Redis)`,
  );
  console.log(
    JSON.stringify({
      csv_rows_per_s: csvRate,
      json_rows_per_s: jsonRate,
      profile_rows_per_s: profileRate,
      profile_peak_rss_mb: Math.round(p.peakRssMb),
      peak_rss_mb: Math.round(Math.max(c.peakRssMb, j.peakRssMb)),
      enqueue_rows_per_s: enqueueRate,
      raw_addbulk_per_s: rawRate,
      raw_addbulk_pipelined_per_s: pipelinedRate,
      machine_sha256_ms: speedMs,
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
