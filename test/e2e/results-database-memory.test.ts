import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { childEnv, distPath } from "../support/processes.js";

const ROWS = 1_000_000;
/** Rows i ≥ SINCE_ROW were last tried at or after --since; every tenth row succeeded. */
const SINCE_ROW = 100_000;
const EXPECTED = ROWS - SINCE_ROW + 1 - ((ROWS - SINCE_ROW) / 10 + 1);
const LIMIT_KB = 150 * 1024;

/**
 * Loaded into the CLI with --import: as the process exits it writes its peak resident set size
 * (getrusage's ru_maxrss, in kB: the kernel's high-water mark over the whole life of the process, the
 * VmHWM of /proc/<pid>/status) as the last line of stderr. Sampling from outside could miss a short
 * peak; this cannot, and it reads after the last row was written.
 */
const PEAK_REPORTER = `import { writeSync } from "node:fs";
process.on("exit", () => writeSync(2, "\\npeak-rss-kb " + process.resourceUsage().maxRSS + "\\n"));`;

describe("results over a million rows of PostgreSQL", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await freshDatabase();
    const pool = await openPool(db.url);
    try {
      await migrate(pool, { logger: silentLogger() });
      await pool.query(
        `INSERT INTO results (idempotency_key, external_id, status, http_status, correlation_id, ruleset_version,
                              attempts, first_attempt_at, last_attempt_at, error)
         SELECT md5(i::text)::uuid, 'INV-' || i, CASE WHEN i % 10 = 0 THEN 'succeeded' ELSE 'failed' END,
                CASE WHEN i % 10 = 0 THEN 201 ELSE 503 END, 'cid-' || i, '2026.10', 5,
                $1::timestamptz + i * interval '1 second', $1::timestamptz + i * interval '1 second',
                CASE WHEN i % 10 = 0 THEN NULL ELSE 'attempts exhausted: 503 Service Unavailable' END
           FROM generate_series(1, $2::int) AS i`,
        ["2026-10-01T00:00:00Z", ROWS],
      );
      await pool.query("ANALYZE results");
    } finally {
      await pool.end();
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  it("when results --status failed --since … streams 810,000 of 1,000,000 rows, then every row comes out and the peak RSS stays under 150 MB", async () => {
    const since = new Date(Date.parse("2026-10-01T00:00:00Z") + SINCE_ROW * 1000).toISOString();
    const child = spawn(
      process.execPath,
      [
        "--import",
        `data:text/javascript,${encodeURIComponent(PEAK_REPORTER)}`,
        distPath("workers/cli.js"),
        "results",
        "--status",
        "failed",
        "--since",
        since,
      ],
      {
        env: childEnv({ RESULTS_DATABASE_URL: db.url, REDIS_URL: "redis://127.0.0.1:1" }),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let lines = 0;
    let first = "";
    child.stdout.on("data", (chunk: Buffer) => {
      if (first === "") first = chunk.toString("utf8", 0, Math.min(chunk.length, 200));
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));

    expect(code, stderr).toBe(0);
    expect(first).toMatch(/^idempotency_key,external_id,status,/);
    expect(lines - 1).toBe(EXPECTED); // the header, then one line per failed row since --since
    const peakKb = Number(/peak-rss-kb (\d+)\n$/.exec(stderr)?.[1]);
    expect(peakKb, stderr).toBeGreaterThan(0);
    expect(peakKb).toBeLessThanOrEqual(LIMIT_KB);
  }, 120_000);
});
