import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { startSimulator } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { parseReport, readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { freshDatabase } from "../support/postgres.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_stale_report_0123456789";
const cleanups = cleanupsAfterEach();

describe("the results of record after an exporter died holding a report's rows", () => {
  it("when the exporter is killed while a report's rows wait on a lock, and retry and run succeed later, then PostgreSQL shows the newer report row for row, not the older", async () => {
    const db = await freshDatabase();
    const pool = await openPool(db.url);
    cleanups.push(async () => {
      await pool.end();
      await db.drop();
    });
    await migrate(pool, { logger: silentLogger() });
    const sim = await startSimulator({ apiKey: API_KEY, seed: 7, errorRate: 1 });
    cleanups.push(() => sim.close());
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    await writeFile(
      join(drop.dir, "night.csv"),
      "external_id,currency,destination_country,archive_policy\nN-1,EUR,DE,eu-10y\nN-2,EUR,DE,eu-10y\nN-3,EUR,DE,eu-10y\n",
    );
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "stale-report", dropDir: drop.dir },
      {
        RESULTS_DATABASE_URL: db.url,
      },
    );

    // An operator's query holds batch_rows: the exporter's write of the report's rows waits behind it.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE batch_rows IN ACCESS EXCLUSIVE MODE");

    // Night 1: the service answers 503 to everything; one attempt each, so every invoice ends failed.
    const night = spawnNode("workers/cli.js", ["run", "--deadline", "2m"], { ...env, MAX_ATTEMPTS: "1" });
    const waiting = async () =>
      (
        await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%batch_rows%'`,
        )
      ).rows[0]?.n === 1;
    await until(
      async () => (await readReports(drop.dir).catch(() => new Map())).size === 1 && (await waiting()),
      60_000,
      "night 1's report on disk and its rows waiting on the lock",
    );
    const [older] = [...(await readReports(drop.dir)).values()];
    expect(older?.rows.map((r) => [r.status, r.http_status])).toEqual([
      ["failed", "503"],
      ["failed", "503"],
      ["failed", "503"],
    ]);
    night.child.kill("SIGKILL");
    await night.exited;
    await locker.query("ROLLBACK");

    // Night 2: the service is back; the operator retries the failed invoices and runs again.
    sim.setFaults({ errorRate: 0 });
    const retry = await runCli(["retry"], env);
    expect(retry.code, retry.output).toBe(0);
    const run = await finish(spawnNode("workers/cli.js", ["run", "--deadline", "2m"], env), 150_000);
    expect(run.code, run.output).toBe(0);

    const [report] = [...(await readReports(drop.dir)).values()];
    const summary = summarySchema.parse(report?.summary);
    expect(report?.rows.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    const q = async (sql: string, params: unknown[] = []) =>
      (await pool.query<Record<string, unknown>>(sql, params)).rows;
    const [head] = await q("SELECT counts FROM batches WHERE batch_id = $1", [summary.batch_id]);
    expect(head?.["counts"]).toMatchObject({ succeeded: 3, failed: 0 });
    expect(
      await q(
        `SELECT line, idempotency_key::text AS key, decision, error FROM batch_rows
          WHERE batch_id = $1 ORDER BY line`,
        [summary.batch_id],
      ),
    ).toEqual(
      (report?.rows ?? []).map((r) => ({
        line: r.line,
        key: r.idempotency_key,
        decision: "succeeded",
        error: null,
      })),
    );
    const results = spawnNode("workers/cli.js", ["results", "--batch", summary.batch_id], env);
    let stdout = "";
    results.child.stdout?.on("data", (data: Buffer) => (stdout += data.toString()));
    const exported = await finish(results);
    expect(exported.code, exported.output).toBe(0);
    expect(parseReport(stdout).rows).toEqual(report?.rows);
  }, 240_000);
});
