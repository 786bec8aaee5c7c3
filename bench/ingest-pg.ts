// npm run bench:ingest-pg — what deduplication beyond retention costs at ingest: N new rows ingested
// (claimed, read, keyed, registered and enqueued, as `invoice-relay ingest` does) without
// RESULTS_DATABASE_URL, then with it: every key unknown to Redis is looked up in PostgreSQL, one query
// per chunk, against a results table that already holds unrelated succeeded invoices.
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { openContext } from "../src/cli/context.js";
import { openPastResults } from "../src/cli/past-results.js";
import { loadConfig } from "../src/config/load.js";
import { RedisServer } from "../src/dev/redis-server.js";
import { Outbox } from "../src/ledger/outbox.js";
import { silentLogger } from "../src/log/logger.js";
import { createRedis } from "../src/queue/connection.js";
import { dropPass } from "../src/use-cases/drop-pass.js";
import { writeCsv } from "./generate.js";
import { startBenchDatabase, type BenchDatabase } from "./results-database.js";
import { hostSpeed, resetPrivateRedis, round } from "./support.js";

const N = Number(process.env["BENCH_INGEST_ROWS"] ?? 200_000);
const PAST = Number(process.env["BENCH_PAST_RESULTS"] ?? 200_000);
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? 20_000);

type Variant = "redis" | "pg" | "pg-lookup";

const privateRedis =
  process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
const redisUrl = process.env["REDIS_URL"] ?? privateRedis?.url ?? "";
const admin: Redis = createRedis(redisUrl, "producer", "bench-admin");
const db = await startBenchDatabase();
const dir = await mkdtemp(join(tmpdir(), "invoice-relay-bench-ingest-pg-"));

/** Unrelated succeeded invoices, as a database of record holds after some nights, so the index is not empty. */
async function seedPastResults(database: BenchDatabase, rows: number): Promise<void> {
  await database.pool.query(
    `INSERT INTO results (idempotency_key, external_id, status, http_status, correlation_id, ruleset_version,
       attempts, first_attempt_at, last_attempt_at, response_body, event_id)
     SELECT md5('past-' || i)::uuid, 'PAST-' || lpad(i::text, 8, '0'), 'succeeded', 201,
            'corr-' || md5('c' || i), 'rs-7', 1, now() - interval '30 days', now() - interval '30 days',
            jsonb_build_object('id', i, 'status', 'accepted', 'correlation_id', 'corr-' || md5('c' || i)),
            (1700000000000 + i)::text || '-0'
       FROM generate_series(1, $1::int) AS i`,
    [rows],
  );
  await database.pool.query("ANALYZE results");
}

/** Waits for an AOF rewrite under way to end: BGREWRITEAOF is refused meanwhile. */
async function rewriteDone(redis: Redis): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (/aof_rewrite_in_progress:0/.test(await redis.info("persistence"))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("Redis did not finish rewriting its AOF within 60 s");
}

/**
 * One ingest of `file` on a fresh QUEUE_PREFIX and drop folder, timed from the pass's start to its end.
 * `pg`: RESULTS_DATABASE_URL set and the outbox on, as in a deployment whose run or worker exports;
 * `pg-lookup`: the setting without the outbox, the look-up alone.
 */
async function ingestOnce(file: string, rows: number, variant: Variant): Promise<number> {
  if (privateRedis !== undefined) {
    await rewriteDone(admin); // the pass before may have started one (auto-aof-rewrite)
    await resetPrivateRedis(admin);
  }
  const prefix = `bench-ingest-${randomUUID()}`;
  const dropDir = join(dir, prefix);
  await mkdir(dropDir);
  await copyFile(file, join(dropDir, "bench.csv"));
  const config = loadConfig({
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    DROP_DIR: dropDir,
    SETTLE_MS: "0",
    LOG_LEVEL: "silent",
    ...(variant === "redis" ? {} : { RESULTS_DATABASE_URL: db.url }),
  });
  const logger = silentLogger();
  const past = await openPastResults(config, logger);
  const ctx = await openContext(config, { dropFolder: true, logger });
  try {
    if (variant === "pg") await new Outbox(ctx.redis, prefix).enable();
    const deps = { ...ctx, logger, beyondRetention: past.beyondRetention(ctx.redis, prefix) };
    const began = performance.now();
    const passed = await dropPass(deps, 0);
    const seconds = (performance.now() - began) / 1000;
    const result = passed[0]?.result;
    if (passed.length !== 1 || result?.kind !== "ingested" || result.enqueued !== rows)
      throw new Error(`ingest (${variant}): expected ${rows} enqueued, got ${JSON.stringify(result)}`);
    return rows / seconds;
  } finally {
    await ctx.close();
    await past.close();
    await rm(dropDir, { recursive: true, force: true });
  }
}

try {
  const speed = hostSpeed();
  await seedPastResults(db, PAST);
  const file = join(dir, "bench.csv");
  await writeCsv(file, N);
  if (WARMUP > 0) {
    const warm = join(dir, "warm.csv");
    await writeCsv(warm, WARMUP, N);
    for (const variant of ["redis", "pg", "pg-lookup"] as const) await ingestOnce(warm, WARMUP, variant);
  }
  const without = await ingestOnce(file, N, "redis");
  const withPg = await ingestOnce(file, N, "pg");
  const lookupOnly = await ingestOnce(file, N, "pg-lookup");
  const load = loadavg().map((l) => l.toFixed(2));
  console.log(
    `machine: ${cpus().length} cores, load average ${load.join(" ")}; single-core speed ${round(speed)}k JSON round trips/s`,
  );
  console.log(
    `ingest of ${N} new CSV rows (claim, read, key, register, enqueue; no worker), each on a fresh QUEUE_PREFIX; ` +
      `Redis ${privateRedis === undefined ? "from REDIS_URL" : "private, AOF everysec, emptied before each pass"}`,
  );
  console.log(
    `PostgreSQL: private, fsync and synchronous_commit on, results holding ${PAST} unrelated succeeded invoices`,
  );
  const ratio = (a: number) => (a / without).toFixed(2);
  console.log(`${"without RESULTS_DATABASE_URL".padEnd(60)} ${round(without)} rows/s`);
  console.log(
    `${"with it (every key looked up; outbox on, as deployed)".padEnd(60)} ${round(withPg)} rows/s (${ratio(withPg)}×)`,
  );
  console.log(
    `${"with it, outbox off (the look-up alone)".padEnd(60)} ${round(lookupOnly)} rows/s (${ratio(lookupOnly)}×)`,
  );
  console.log(
    JSON.stringify({
      ingest_per_s: round(without),
      ingest_pg_per_s: round(withPg),
      pg_ratio: Number(ratio(withPg)),
      ingest_pg_lookup_only_per_s: round(lookupOnly),
      pg_lookup_only_ratio: Number(ratio(lookupOnly)),
      load_average_1m: Number(load[0]),
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await admin.quit();
  await db.close();
  await privateRedis?.dispose();
}
