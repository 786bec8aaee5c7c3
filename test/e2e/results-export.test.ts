import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerNames } from "../../src/ledger/names.js";
import { outboxBacklog } from "../../src/ledger/outbox-backlog.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { startSimulator } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { readReports, summarySchema, copySamples, tempDropDir } from "../support/drop.js";
import { freshDatabase } from "../support/postgres.js";
import { testRedisUrl } from "../support/redis.js";
import { faultyService } from "../support/faulty-service.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_export_key_0123456789";
const cleanups = cleanupsAfterEach();

/** A migrated database of the test's own. */
async function migratedDatabase(): Promise<{ url: string; pool: pg.Pool }> {
  const db = await freshDatabase();
  const pool = await openPool(db.url);
  await migrate(pool, { logger: silentLogger() });
  cleanups.push(async () => {
    await pool.end();
    await db.drop();
  });
  return { url: db.url, pool };
}

describe("run with RESULTS_DATABASE_URL", () => {
  it("when run passes the mixed samples against a faulty service, then every report row is in PostgreSQL with its status, correlation id and ruleset version, and attempts match the service's log", async () => {
    const { sim, seen } = await faultyService(API_KEY, { seed: 31, lostRate: 0.1 });
    const drop = await tempDropDir();
    const redis = new Redis(testRedisUrl());
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => {
        redis.disconnect();
        return Promise.resolve();
      },
    );
    await copySamples(drop.dir);
    const { url, pool } = await migratedDatabase();
    const prefix = `export-${randomUUID()}`;

    const run = await runCli(
      ["run"],
      cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
        {
          RESULTS_DATABASE_URL: url,
          BACKOFF_BASE_MS: "50",
          BACKOFF_CAP_MS: "500",
        },
      ),
      120_000,
    );
    expect([run.code, run.output]).toEqual([2, expect.any(String)]); // the samples' bad rows on purpose
    // run reported only once its results were exported
    expect((await outboxBacklog(redis, prefix)).entries).toBe(0);

    const reports = [...(await readReports(drop.dir)).values()];
    expect(reports.length).toBeGreaterThan(1);
    const q = async (sql: string, params: unknown[] = []) =>
      (await pool.query<Record<string, unknown>>(sql, params)).rows;
    let lines = 0;
    for (const report of reports) {
      const summary = summarySchema.parse(report.summary);
      const [batch] = await q("SELECT state, rows, counts FROM batches WHERE batch_id = $1", [
        summary.batch_id,
      ]);
      expect(batch).toMatchObject({ state: "reported", rows: summary.rows });
      const stored = await q(
        `SELECT r.line, r.idempotency_key::text AS key, s.status, s.correlation_id, s.ruleset_version
           FROM batch_rows r LEFT JOIN results s USING (idempotency_key)
          WHERE r.batch_id = $1 ORDER BY r.line`,
        [summary.batch_id],
      );
      const byLine = new Map(stored.map((s) => [s["line"], s]));
      for (const row of report.rows) {
        lines++;
        const s = byLine.get(row.line);
        const keyed = row.status !== "rejected";
        expect(s?.["key"] ?? null, `line ${row.line}`).toBe(keyed ? row.idempotency_key : null);
        if (!["succeeded", "failed", "duplicate"].includes(row.status)) continue;
        expect(
          [s?.["status"], s?.["correlation_id"] ?? "", s?.["ruleset_version"] ?? ""],
          `line ${row.line} of ${summary.file}`,
        ).toEqual([
          row.status === "duplicate" ? "succeeded" : row.status,
          row.correlation_id,
          row.ruleset_version,
        ]);
      }
      expect(stored).toHaveLength(report.rows.length);
    }
    expect(lines).toBeGreaterThan(30);

    // attempts: per key, the same number and the same answers as the service logged (lost: a network error)
    const attempts = await q(
      "SELECT idempotency_key::text AS key, attempt, http_status, network_error FROM attempts ORDER BY 1, 2",
    );
    const ours = new Map<string, string[]>();
    for (const a of attempts)
      ours.set(String(a["key"]), [
        ...(ours.get(String(a["key"])) ?? []),
        a["network_error"] === null ? String(a["http_status"]) : "network",
      ]);
    const theirs = new Map<string, string[]>();
    for (const a of seen)
      if (a.idempotencyKey !== undefined)
        theirs.set(a.idempotencyKey, [
          ...(theirs.get(a.idempotencyKey) ?? []),
          a.lost ? "network" : String(a.status),
        ]);
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));
    expect(seen.some((a) => a.lost || a.status >= 500)).toBe(true);
    // every key the service saw has its result, its attempts counted
    const results = await q("SELECT idempotency_key::text AS key, attempts FROM results");
    const counted = new Map(results.map((r) => [String(r["key"]), r["attempts"]]));
    for (const [key, list] of theirs) expect(counted.get(key), key).toBe(list.length);
  });

  it("when the results database does not answer and the outbox holds events, then status says both, without the password", async () => {
    const redis = new Redis(testRedisUrl());
    cleanups.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    const prefix = `export-${randomUUID()}`;
    const names = new LedgerNames(prefix);
    await redis.set(names.outboxOn, "1");
    await redis.xadd(names.outbox, "*", "e", "{}");
    await redis.xadd(names.outbox, "*", "e", "{}");
    const env = cliEnv(
      { queuePrefix: prefix },
      {
        RESULTS_DATABASE_URL: "postgres://relay:pw-not-shown-42@127.0.0.1:1/relay",
      },
    );
    const text = await runCli(["status"], env);
    expect(text.code, text.output).toBe(0);
    expect(text.output).toContain(
      "results database       postgres://relay:***@127.0.0.1:1/relay DOES NOT ANSWER",
    );
    expect(text.output).toMatch(
      /outbox to PostgreSQL {3}on, 2 event\(s\) not exported yet, oldest \d+ s old/,
    );
    expect(text.output).toContain("does not answer: submission goes on");
    expect(text.output).not.toContain("pw-not-shown-42");

    const json = await runCli(["status", "--json"], env);
    const report = z
      .object({
        outbox: z.record(z.string(), z.unknown()),
        results_database: z.record(z.string(), z.unknown()),
      })
      .parse(JSON.parse(json.output));
    expect(report.outbox).toMatchObject({ on: true, entries: 2 });
    expect(typeof report.outbox["oldest_age_seconds"]).toBe("number");
    expect(report.results_database).toMatchObject({
      url: "postgres://relay:***@127.0.0.1:1/relay",
      answers: false,
    });
    expect(json.output).not.toContain("pw-not-shown-42");
  });

  it("when the schema lacks a migration, then run and worker refuse to start with the command to run", async () => {
    const db = await freshDatabase();
    const pool = await openPool(db.url);
    cleanups.push(async () => {
      await pool.end();
      await db.drop();
    });
    await migrate(pool, { logger: silentLogger(), count: 1 });
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const env = cliEnv(
      { apiUrl: "http://127.0.0.1:9", apiKey: API_KEY, name: "export", dropDir: drop.dir },
      {
        RESULTS_DATABASE_URL: db.url,
      },
    );
    for (const command of ["run", "worker"]) {
      const refused = await runCli([command], env);
      expect([command, refused.code]).toEqual([command, 1]);
      expect(refused.output).toContain("run `invoice-relay db migrate`");
    }
  });

  it("when PostgreSQL refuses the export until run's deadline, then run exits 1 saying the results wait for the next process, which exports them", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
    const drop = await tempDropDir();
    const redis = new Redis(testRedisUrl());
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => {
        redis.disconnect();
        return Promise.resolve();
      },
    );
    const rows = Array.from({ length: 20 }, (_, i) => `LATE-${i},EUR,DE,eu-10y`);
    await writeFile(
      join(drop.dir, "late.csv"),
      ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
    );
    const { url, pool } = await migratedDatabase();
    // the attempts cannot be written: every read of the outbox with one in it is refused
    await pool.query("ALTER TABLE attempts RENAME TO attempts_away");
    const prefix = `export-${randomUUID()}`;
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
      // the outbox entries a process had read are taken over once idle LOCK_DURATION_MS
      { RESULTS_DATABASE_URL: url, LOCK_DURATION_MS: "2000" },
    );
    const run = await runCli(["run", "--deadline", "8s"], env, 60_000);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain("not yet in PostgreSQL");
    expect(run.output).toContain("the next `invoice-relay run`, `start` or `worker` exports them");
    expect((await outboxBacklog(redis, prefix)).entries).toBeGreaterThan(0);

    await pool.query("ALTER TABLE attempts_away RENAME TO attempts");
    // with nothing to do, it waits for the outbox: the entries the first run had read are taken over
    // once they have been idle LOCK_DURATION_MS
    const next = await runCli(["run"], env, 90_000);
    expect(next.code, next.output).toBe(0);
    expect((await outboxBacklog(redis, prefix)).entries).toBe(0);
    const counted = await pool.query<{ results: number; attempts: number }>(
      "SELECT (SELECT count(*)::int FROM results) AS results, (SELECT count(*)::int FROM attempts) AS attempts",
    );
    expect(counted.rows[0]).toEqual({ results: 20, attempts: 20 });
  }, 180_000);
});
