import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { outboxBacklog } from "../../src/ledger/outbox-backlog.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { startSimulator } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir, type ReportLine } from "../support/drop.js";
import { freshDatabase } from "../support/postgres.js";
import { testRedisUrl } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// Deduplication beyond retention through the real path: `run` with RESULTS_DATABASE_URL exports a file's
// results to PostgreSQL, a short RESULTS_RETENTION lets the next process's sweep remove the batch and its
// records from Redis, and a re-drop of the same file is then decided from PostgreSQL alone.
const API_KEY = "irs_live_redrop_key_0123456789";
const ROWS = 300;
const RETENTION_MS = 2000;
const cleanups = cleanupsAfterEach();

const FILE = "vendor-redrop.csv";
const fileText = (tag: string) =>
  [
    "external_id,currency,destination_country,archive_policy",
    ...Array.from({ length: ROWS }, (_, i) => `RD-${tag}-${i},EUR,DE,eu-10y`),
  ].join("\n") + "\n";

describe("a re-drop after the ledger's retention, with RESULTS_DATABASE_URL", () => {
  it("when the batch and its records have left Redis and the same file is dropped again, then every row is duplicate with the first run's key and correlation id, nothing is sent, and PostgreSQL holds each key once", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
    const drop = await tempDropDir();
    const redis = new Redis(testRedisUrl());
    const db = await freshDatabase();
    const pool = await openPool(db.url);
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => {
        redis.disconnect();
        return Promise.resolve();
      },
      () => db.drop(),
      () => pool.end(),
    );
    await migrate(pool, { logger: silentLogger() });
    const prefix = `redrop-${randomUUID()}`;
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
      {
        RESULTS_DATABASE_URL: db.url,
        RESULTS_RETENTION: `${RETENTION_MS / 1000}s`,
      },
    );
    const text = fileText(randomUUID().slice(0, 8));
    const reportOf = async (batchId: string): Promise<ReportLine[]> => {
      for (const report of (await readReports(drop.dir)).values())
        if (summarySchema.parse(report.summary).batch_id === batchId) return report.rows;
      throw new Error(`no report of batch ${batchId}`);
    };
    const batchIds = async (): Promise<string[]> =>
      [...(await readReports(drop.dir)).values()].map((r) => summarySchema.parse(r.summary).batch_id);

    // 1. The first drop: sent, succeeded, exported.
    await writeFile(join(drop.dir, FILE), text);
    const first = await runCli(["run"], env, 60_000);
    expect([first.code, first.output]).toEqual([0, expect.any(String)]);
    const [firstBatch] = await batchIds();
    if (firstBatch === undefined) throw new Error("the first run wrote no report");
    const original = await reportOf(firstBatch);
    expect(original.map((r) => r.status)).toEqual(Array<string>(ROWS).fill("succeeded"));
    expect(original.every((r) => r.correlation_id !== "")).toBe(true);
    expect(sim.stats().requests.total).toBe(ROWS);
    expect((await outboxBacklog(redis, prefix)).entries).toBe(0);

    // 2. The retention passes; a run with nothing to do sweeps it at start. Its batch and records leave Redis.
    await sleep(RETENTION_MS + 500);
    const sweep = await runCli(["run"], env, 60_000);
    expect([sweep.code, sweep.output]).toEqual([0, expect.stringContaining("nothing to do")]);
    const names = new LedgerNames(prefix);
    expect(await new BatchStore(redis, prefix).get(firstBatch)).toBeUndefined();
    expect(await new BatchStore(redis, prefix).list()).toEqual([]);
    const recordsLeft = await redis.exists(...original.map((r) => names.record(r.idempotency_key)));
    expect(recordsLeft).toBe(0);
    expect(await redis.hlen(names.externalIds)).toBe(0);

    // 3. The same file again, against a service that has forgotten everything it saw.
    sim.reset();
    await writeFile(join(drop.dir, FILE), text);
    const again = await runCli(["run"], env, 60_000);
    expect([again.code, again.output]).toEqual([0, expect.any(String)]);
    const secondBatch = (await batchIds()).find((id) => id !== firstBatch);
    if (secondBatch === undefined) throw new Error("the re-drop wrote no report");
    const redrop = await reportOf(secondBatch);
    expect(
      redrop.map((r) => [r.line, r.idempotency_key, r.status, r.correlation_id, r.ruleset_version]),
    ).toEqual(
      original.map((r) => [r.line, r.idempotency_key, "duplicate", r.correlation_id, r.ruleset_version]),
    );
    expect(sim.stats().requests.total).toBe(0);
    expect(sim.stats().effects.total).toBe(0);

    // PostgreSQL: each key once, still succeeded with its first answer; both batches' lines map to it.
    const results = await pool.query<{ key: string; status: string; correlation_id: string }>(
      "SELECT idempotency_key::text AS key, status, correlation_id FROM results ORDER BY 1",
    );
    expect(results.rows).toEqual(
      original
        .map((r) => ({ key: r.idempotency_key, status: "succeeded", correlation_id: r.correlation_id }))
        .sort((a, b) => a.key.localeCompare(b.key)),
    );
    const attempts = await pool.query<{ n: string; keys: string }>(
      "SELECT count(*) AS n, count(DISTINCT idempotency_key) AS keys FROM attempts",
    );
    expect(attempts.rows[0]).toEqual({ n: String(ROWS), keys: String(ROWS) });
    const lines = await pool.query<{ batch_id: string; n: string }>(
      "SELECT batch_id::text, count(DISTINCT idempotency_key) AS n FROM batch_rows GROUP BY 1 ORDER BY 1",
    );
    expect(lines.rows.sort((a, b) => a.batch_id.localeCompare(b.batch_id))).toEqual(
      [firstBatch, secondBatch].sort().map((id) => ({ batch_id: id, n: String(ROWS) })),
    );
  }, 180_000);
});
