import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { outboxBacklog } from "../../src/ledger/outbox-backlog.js";
import { silentLogger } from "../../src/log/logger.js";
import { EXPORT_GROUP } from "../../src/records/exporter.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { startSimulator, type Attempt, type SimulatorHandle } from "../../src/simulator/index.js";
import { finish } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { freshDatabase } from "../support/postgres.js";
import { PostgresServer } from "../support/postgres-server.js";
import { spawnNode, until } from "../support/processes.js";
import { testRedisUrl } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_export_outage_0123456789";
const cleanups = cleanupsAfterEach();

async function faultySimulator(seed: number): Promise<{ sim: SimulatorHandle; seen: Attempt[] }> {
  const sim = await startSimulator({
    apiKey: API_KEY,
    seed,
    latencyMs: { min: 20, max: 40 },
    errorRate: 0.05,
    throttleRate: 0.02,
    retryAfterSeconds: 1,
    lostRate: 0.03,
  });
  const seen: Attempt[] = [];
  sim.events.on("attempt", (attempt) => seen.push(attempt));
  cleanups.push(() => sim.close());
  return { sim, seen };
}

/** A drop folder with one CSV of `count` valid invoices. */
async function dropOf(count: number, tag: string): Promise<string> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const rows = Array.from({ length: count }, (_, i) => `${tag}-${i},EUR,DE,eu-10y`);
  await writeFile(
    join(drop.dir, `${tag}.csv`),
    ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
  );
  return drop.dir;
}

function redisClient(): Redis {
  const redis = new Redis(testRedisUrl());
  cleanups.push(() => {
    redis.disconnect();
    return Promise.resolve();
  });
  return redis;
}

/** What PostgreSQL holds after the night, against the report and the service's log: each once, none missing. */
async function expectExactlyOnce(pool: pg.Pool, dropDir: string, seen: readonly Attempt[], count: number) {
  const q = async (sql: string) => (await pool.query<Record<string, unknown>>(sql)).rows;
  const report = [...(await readReports(dropDir)).values()][0];
  expect(report?.rows).toHaveLength(count);
  const results = await q(
    "SELECT idempotency_key::text AS key, status, correlation_id, attempts FROM results",
  );
  expect(results).toHaveLength(count);
  const byKey = new Map(results.map((r) => [String(r["key"]), r]));
  for (const row of report?.rows ?? [])
    expect([
      byKey.get(row.idempotency_key)?.["status"],
      byKey.get(row.idempotency_key)?.["correlation_id"],
    ]).toEqual([row.status, row.correlation_id]);
  expect(await q("SELECT count(*)::int AS n, count(DISTINCT line)::int AS lines FROM batch_rows")).toEqual([
    { n: count, lines: count },
  ]);
  const perKey = new Map<string, number>();
  for (const a of seen)
    if (a.idempotencyKey !== undefined) perKey.set(a.idempotencyKey, (perKey.get(a.idempotencyKey) ?? 0) + 1);
  const attempts = await q(
    "SELECT idempotency_key::text AS key, count(*)::int AS n FROM attempts GROUP BY 1",
  );
  expect(Object.fromEntries(attempts.map((a) => [String(a["key"]), a["n"]]))).toEqual(
    Object.fromEntries(perKey),
  );
  for (const r of results) expect(r["attempts"]).toBe(perKey.get(String(r["key"])));
}

describe("the export when PostgreSQL or the exporter fails", () => {
  it("when PostgreSQL stops in the middle of a run of 2,000 invoices with faults, then submission goes on, the outbox drains afterwards, and every result is in PostgreSQL exactly once", async () => {
    const server = await PostgresServer.start();
    cleanups.push(() => server.dispose());
    const pool = await openPool(server.url);
    cleanups.push(() => pool.end());
    await migrate(pool, { logger: silentLogger() });
    const { sim, seen } = await faultySimulator(53);
    const dropDir = await dropOf(2000, "PGDOWN");
    const prefix = `export-outage-${randomUUID()}`;
    const redis = redisClient();

    const run = spawnNode(
      "workers/cli.js",
      ["run", "--deadline", "4m"],
      cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: dropDir },
        {
          RESULTS_DATABASE_URL: server.url,
          SUBMIT_CONCURRENCY: "8",
          BACKOFF_BASE_MS: "50",
          BACKOFF_CAP_MS: "500",
        },
      ),
    );
    // after the ingest (which asks the database about each chunk, and waits for it while it is down)
    const batches = new BatchStore(redis, prefix);
    await until(
      async () => {
        const [id] = await batches.newest(1);
        const meta = id === undefined ? undefined : await batches.get(id);
        return meta?.state === "ingested" && sim.stats().effects.total >= 400;
      },
      60_000,
      "the file ingested and 400 invoices sent",
    );
    await server.pause();
    const atStop = sim.stats().effects.total;
    // down until the exporter has found it refusing and submission has gone on for 400 more invoices
    await until(
      () =>
        Promise.resolve(
          run.output().includes("does not take the results") && sim.stats().effects.total >= atStop + 400,
        ),
      120_000,
      "the exporter to find PostgreSQL down while 400 more invoices are sent",
    );
    // submission went on without the database, and the outbox kept what was not exported
    expect(sim.stats().effects.total, run.output()).toBeGreaterThan(atStop);
    expect((await outboxBacklog(redis, prefix)).entries).toBeGreaterThan(0);
    await server.resume();

    const { code } = await finish(run, 240_000);
    expect(code, run.output()).toBe(0);
    expect(run.output()).toContain("does not take the results: submission goes on");
    expect(run.output()).toContain(
      `PostgreSQL at postgres://postgres@127.0.0.1:${server.port}/postgres does not take`,
    );
    expect((await outboxBacklog(redis, prefix)).entries).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 2000, keysWithMultipleEffects: 0 });
    await expectExactlyOnce(pool, dropDir, seen, 2000);
  }, 240_000);

  it("when the exporting process is killed mid-drain and another starts, then PostgreSQL ends up with every result once, none missing", async () => {
    const db = await freshDatabase();
    const pool = await openPool(db.url);
    cleanups.push(async () => {
      await pool.end();
      await db.drop();
    });
    await migrate(pool, { logger: silentLogger() });
    const { sim, seen } = await faultySimulator(59);
    const dropDir = await dropOf(1500, "KILLED");
    const prefix = `export-kill-${randomUUID()}`;
    const redis = redisClient();
    const names = new LedgerNames(prefix);
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: dropDir },
      {
        SUBMIT_CONCURRENCY: "16",
        BACKOFF_BASE_MS: "50",
        BACKOFF_CAP_MS: "500",
        LOCK_DURATION_MS: "2000",
      },
    );
    // a night whose events wait in the outbox: PostgreSQL holds the exporter back with a lock on
    // `attempts` (which the ingest's look-up does not read), and `run` is killed once its report is
    // written, with what its exporter had read still pending
    const exporting = { ...env, RESULTS_DATABASE_URL: db.url };
    const lock = await pool.connect();
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE attempts IN EXCLUSIVE MODE");
    const night = spawnNode("workers/cli.js", ["run"], exporting);
    const batches = new BatchStore(redis, prefix);
    await until(
      async () => {
        const [id] = await batches.newest(1);
        return id !== undefined && (await batches.get(id))?.state === "reported";
      },
      180_000,
      "the night's report",
    );
    night.child.kill("SIGKILL");
    await night.exited;
    await lock.query("ROLLBACK");
    lock.release();
    const backlog = (await outboxBacklog(redis, prefix)).entries;
    expect(backlog).toBeGreaterThan(1500);

    const first = spawnNode("workers/cli.js", ["worker"], exporting);
    await until(
      async () =>
        (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM results")).rows[0]?.n !== 0,
      60_000,
      "the first rows in PostgreSQL",
    );
    first.child.kill("SIGKILL");
    await first.exited;
    const left = await outboxBacklog(redis, prefix);
    expect(left.entries).toBeGreaterThan(0);
    expect(left.entries).toBeLessThan(backlog);

    // the next process drains the rest, taking over what the killed one had read once it is idle LOCK_DURATION_MS
    const second = spawnNode("workers/cli.js", ["worker"], exporting);
    await until(
      async () =>
        (await outboxBacklog(redis, prefix)).entries === 0 &&
        Number((await redis.xpending(names.outbox, EXPORT_GROUP))[0]) === 0,
      120_000,
      "the outbox drained",
    );
    second.child.kill("SIGTERM");
    expect((await finish(second, 30_000)).code, second.output()).toBe(0);
    await expectExactlyOnce(pool, dropDir, seen, 1500);
  }, 240_000);
});
