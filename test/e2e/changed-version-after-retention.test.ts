import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { LedgerNames } from "../../src/ledger/names.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool, type Pool } from "../../src/records/pool.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir, type ReportLine } from "../support/drop.js";
import { freshDatabase } from "../support/postgres.js";
import { testRedisUrl } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// A changed version of an invoice dropped after Redis's retention has forgotten the earlier one, with
// RESULTS_DATABASE_URL: the results of record decide it by external_id as the ledger would within the
// retention (docs/submission.md, "Idempotency keys"; docs/reliability.md).
const API_KEY = "irs_live_changed_version_0123456789";
const RETENTION_MS = 2000;
const HEADER = "external_id,currency,destination_country,archive_policy";
const cleanups = cleanupsAfterEach();

async function setUp(): Promise<{ dropDir: string; pool: Pool; redis: Redis; dbUrl: string }> {
  const drop = await tempDropDir();
  const redis = new Redis(testRedisUrl());
  const db = await freshDatabase();
  const pool = await openPool(db.url);
  cleanups.push(
    drop.cleanup,
    () => {
      redis.disconnect();
      return Promise.resolve();
    },
    () => db.drop(),
    () => pool.end(),
  );
  await migrate(pool, { logger: silentLogger() });
  return { dropDir: drop.dir, pool, redis, dbUrl: db.url };
}

async function simulator(options: { readonly errorRate?: number } = {}): Promise<SimulatorHandle> {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 11, ...options });
  cleanups.push(() => sim.close());
  return sim;
}

/** The report of the file dropped under `name`. */
async function reportOf(dropDir: string, name: string): Promise<ReportLine[]> {
  const report = (await readReports(dropDir)).get(name);
  if (report !== undefined && summarySchema.safeParse(report.summary).success) return report.rows;
  throw new Error(`no report of ${name}`);
}

describe("a changed version of an invoice after the retention, with RESULTS_DATABASE_URL", () => {
  it("when the earlier version succeeded and the retention has removed it from Redis, then the changed version is conflict naming the earlier key and nothing reaches the service", async () => {
    const { dropDir, pool, redis, dbUrl } = await setUp();
    const sim = await simulator();
    const prefix = `changed-${randomUUID()}`;
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: dropDir },
      {
        RESULTS_DATABASE_URL: dbUrl,
        RESULTS_RETENTION: `${RETENTION_MS / 1000}s`,
      },
    );

    // night 1: the first version succeeds
    await writeFile(join(dropDir, "night-1.csv"), `${HEADER}\nINV-1,EUR,DE,eu-10y\n`);
    const first = await runCli(["run"], env, 60_000);
    expect(first.code, first.output).toBe(0);
    const [sent] = await reportOf(dropDir, "night-1.csv");
    expect(sent?.status).toBe("succeeded");
    const earlierKey = sent?.idempotency_key ?? "";

    // the retention passes and a pass sweeps: Redis no longer knows INV-1
    await sleep(RETENTION_MS + 500);
    const sweep = await runCli(["run"], env, 60_000);
    expect([sweep.code, sweep.output]).toEqual([0, expect.stringContaining("nothing to do")]);
    expect(await redis.hget(new LedgerNames(prefix).externalIds, "INV-1")).toBeNull();

    // night 2: a changed version of INV-1
    await writeFile(join(dropDir, "night-2.csv"), `${HEADER}\nINV-1,USD,DE,eu-10y\n`);
    const second = await runCli(["run"], env, 60_000);
    expect(second.code, second.output).toBe(2);
    const [changed] = await reportOf(dropDir, "night-2.csv");
    expect(changed?.status).toBe("conflict");
    expect(changed?.idempotency_key).not.toBe(earlierKey);
    expect(changed?.error).toContain(earlierKey);
    expect(sim.stats().requests.total).toBe(1);
    expect(sim.stats().effects.total).toBe(1);

    const results = await pool.query<{ key: string; status: string }>(
      "SELECT idempotency_key::text AS key, status FROM results WHERE external_id = 'INV-1'",
    );
    expect(results.rows).toEqual([{ key: earlierKey, status: "succeeded" }]);
    const line = await pool.query<{ decision: string; conflict_with: string | null }>(
      "SELECT decision, conflict_with::text FROM batch_rows WHERE idempotency_key = $1",
      [changed?.idempotency_key],
    );
    expect(line.rows).toEqual([{ decision: "conflict", conflict_with: earlierKey }]);
  }, 180_000);

  it("when the earlier version failed and Redis no longer holds it, then the corrected version is sent once and the failed one reads superseded in PostgreSQL and in status", async () => {
    const { dropDir, pool, dbUrl } = await setUp();
    const env = {
      REDIS_URL: testRedisUrl(),
      RESULTS_DATABASE_URL: dbUrl,
      DROP_DIR: dropDir,
      SETTLE_MS: "0",
      MAX_ATTEMPTS: "1",
      LOG_LEVEL: "warn",
      INVOICE_API_KEY: API_KEY,
    };

    // night 1: the first version fails (the service answers 503 and no attempt is left)
    const down = await simulator({ errorRate: 1 });
    await writeFile(join(dropDir, "night-1.csv"), `${HEADER}\nINV-1,EUR,DE,eu-10y\n`);
    const first = await runCli(
      ["run"],
      { ...env, INVOICE_API_URL: down.url, QUEUE_PREFIX: `failed-${randomUUID()}` },
      60_000,
    );
    expect(first.code, first.output).toBe(2);
    const [failed] = await reportOf(dropDir, "night-1.csv");
    expect(failed?.status).toBe("failed");
    const failedKey = failed?.idempotency_key ?? "";

    // night 2, on a Redis that never held night 1 (a new one), with the service back: a corrected version.
    // Another Redis is another deployment, with a drop folder of its own (one deployment per folder).
    const sim = await simulator();
    const prefix = `corrected-${randomUUID()}`;
    const newDrop = await tempDropDir();
    cleanups.push(newDrop.cleanup);
    const night2 = { ...env, INVOICE_API_URL: sim.url, QUEUE_PREFIX: prefix, DROP_DIR: newDrop.dir };
    await writeFile(join(newDrop.dir, "night-2.csv"), `${HEADER}\nINV-1,USD,DE,eu-10y\n`);
    const second = await runCli(["run"], night2, 60_000);
    expect(second.code, second.output).toBe(0);
    const [corrected] = await reportOf(newDrop.dir, "night-2.csv");
    expect(corrected?.status).toBe("succeeded");
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });

    const results = await pool.query<{ key: string; status: string; by: string | null }>(
      "SELECT idempotency_key::text AS key, status, superseded_by::text AS by FROM results " +
        "WHERE external_id = 'INV-1' ORDER BY status",
    );
    expect(results.rows).toEqual([
      { key: corrected?.idempotency_key, status: "succeeded", by: null },
      { key: failedKey, status: "superseded", by: corrected?.idempotency_key },
    ]);
    const status = await runCli(["status", "--json"], night2);
    expect(status.code, status.output).toBe(0);
    expect(JSON.parse(status.output)).toMatchObject({ keys: { superseded: 1, failed: 0, succeeded: 1 } });
  }, 180_000);
});
