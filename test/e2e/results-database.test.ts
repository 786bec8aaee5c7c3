import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { runCli } from "../support/cli-run.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { spawnNode } from "../support/processes.js";
import { parseCsvObjects } from "../../bench/chaos/report-csv.js";

const K = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/**
 * Two batches of October and a file rejected as a whole. ACME-1 (K1) was first dropped in B0, then again
 * in 20261001T010000Z-0000b1 as a duplicate; ACME-2 failed with a formula in its correlation id; a rejected row's external_id
 * is a formula too; OLD-5 failed and was superseded by its newer version (K6).
 */
const FIXTURE = `
INSERT INTO batches (batch_id, file, format, created_at, state) VALUES
  ('B0', 'september.csv', 'csv', '2026-09-30T01:00:00Z', 'reported'),
  ('20261001T010000Z-0000b1', 'october.csv', 'csv', '2026-10-01T01:00:00Z', 'reported'),
  ('20261002T010000Z-0000b2', 'broken.json', 'json', '2026-10-02T01:00:00Z', 'rejected');
UPDATE batches SET file_error = 'not JSON at all' WHERE batch_id = '20261002T010000Z-0000b2';
INSERT INTO results (idempotency_key, external_id, status, http_status, correlation_id, ruleset_version,
                     attempts, first_attempt_at, last_attempt_at, error, superseded_by) VALUES
  ('${K(1)}', 'ACME-1', 'succeeded', 201, 'cid-1', '2026.10', 1, '2026-09-30T01:00:00Z', '2026-09-30T01:00:01Z', NULL, NULL),
  ('${K(2)}', 'ACME-2', 'failed', 422, '=HYPERLINK("http://x")', '2026.10', 1, '2026-10-20T01:00:00Z', '2026-10-20T01:00:00Z', '-invalid routing', NULL),
  ('${K(3)}', 'VEND-3', 'failed', 503, 'cid-3', NULL, 5, '2026-11-01T01:00:00Z', '2026-11-02T01:00:00Z', 'attempts exhausted: 503', NULL),
  ('${K(4)}', 'ACME-4', 'queued', NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL),
  ('${K(5)}', 'OLD-5', 'superseded', 422, 'cid-5', NULL, 1, '2026-10-03T01:00:00Z', '2026-10-03T01:00:00Z', 'bad', '${K(6)}'),
  ('${K(6)}', 'OLD-5', 'succeeded', 201, 'cid-6', '2026.10', 2, '2026-10-04T01:00:00Z', '2026-10-04T02:00:00Z', NULL, NULL);
UPDATE results SET trace_id = '4bf92f3577b34da6a3ce929d0e0e4736' WHERE idempotency_key = '${K(2)}';
INSERT INTO batch_rows (batch_id, line, idempotency_key, decision, conflict_with, external_id, error) VALUES
  ('B0', 2, '${K(1)}', 'new', NULL, 'ACME-1', NULL),
  ('20261001T010000Z-0000b1', 2, '${K(1)}', 'duplicate', NULL, 'ACME-1', NULL),
  ('20261001T010000Z-0000b1', 3, '${K(2)}', 'new', NULL, 'ACME-2', NULL),
  ('20261001T010000Z-0000b1', 4, NULL, 'rejected', NULL, '@SUM(A1)', 'currency: "XYZ" is not an ISO 4217 code'),
  ('20261001T010000Z-0000b1', 5, '${K(7)}', 'conflict', '${K(2)}', 'ACME-2', NULL),
  ('20261001T010000Z-0000b1', 6, '${K(4)}', 'new', NULL, 'ACME-4', NULL),
  ('20261001T010000Z-0000b1', 7, '${K(5)}', 'requeue', NULL, 'OLD-5', NULL),
  ('20261001T010000Z-0000b1', 8, '${K(3)}', 'join', NULL, 'VEND-3', NULL),
  ('20261001T010000Z-0000b1', 9, '${K(6)}', 'new', NULL, 'OLD-5', NULL);
`;

/** RFC 4180 with CRLF, read apart from the code that writes it. */
const parseCsv = (text: string) => parseCsvObjects(text, { crlf: true });

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("results from the results of record in PostgreSQL", () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  /** stdout alone (stderr apart), so that CSV and JSON lines are parsed exactly as a pipe would get them. */
  async function results(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const proc = spawnNode("workers/cli.js", ["results", ...args], env);
    let stdout = "";
    let stderr = "";
    proc.child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    proc.child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const { code } = await proc.exited;
    return { code, stdout, stderr };
  }

  beforeAll(async () => {
    db = await freshDatabase();
    const pool = await openPool(db.url);
    try {
      await migrate(pool, { logger: silentLogger() });
      await pool.query(FIXTURE);
    } finally {
      await pool.end();
    }
    // Redis is not needed: a REDIS_URL nobody answers on proves it is never asked.
    env = { RESULTS_DATABASE_URL: db.url, REDIS_URL: "redis://127.0.0.1:1", QUEUE_PREFIX: "results-db" };
  });
  afterAll(async () => {
    await db.drop();
  });

  it("when no filter is given, then every record comes out once, as csv with the Redis export's columns, oldest attempt first, formulas neutralised", async () => {
    const { code, stdout, stderr } = await results([]);
    expect(code, stderr).toBe(0);
    expect(stdout.split("\r\n")[0]).toBe(
      "idempotency_key,external_id,status,http_status,correlation_id,ruleset_version,attempts,batch,line,first_attempt_at,last_attempt_at,error,trace_id",
    );
    const rows = parseCsv(stdout);
    expect(rows.map((r) => r["idempotency_key"])).toEqual([K(1), K(5), K(6), K(2), K(3), K(4)]);
    expect(rows[0]).toEqual({
      idempotency_key: K(1),
      external_id: "ACME-1",
      status: "succeeded",
      http_status: "201",
      correlation_id: "cid-1",
      ruleset_version: "2026.10",
      attempts: "1",
      batch: "B0",
      line: "2",
      first_attempt_at: "2026-09-30T01:00:00.000Z",
      last_attempt_at: "2026-09-30T01:00:01.000Z",
      error: "",
      trace_id: "",
    });
    const acme2 = rows.find((r) => r["external_id"] === "ACME-2");
    expect(acme2).toMatchObject({ correlation_id: `'=HYPERLINK("http://x")`, error: "'-invalid routing" });
    expect(rows.find((r) => r["external_id"] === "ACME-4")).toMatchObject({
      status: "queued",
      batch: "20261001T010000Z-0000b1",
      line: "6",
      last_attempt_at: "",
    });
  });

  it("when --status is repeated or comma-separated with --since and --until, then exactly the records of that window come out", async () => {
    const october = ["--since", "2026-10-01", "--until", "2026-11-01T00:00:00Z"];
    const failed = await results(["--status", "failed", ...october, "--format", "jsonl"]);
    expect(failed.code, failed.stderr).toBe(0);
    expect(jsonLines(failed.stdout).map((r) => r["idempotency_key"])).toEqual([K(2)]);

    const both = await results(["--status", "failed,superseded", "--status", "succeeded", ...october]);
    expect(parseCsv(both.stdout).map((r) => r["idempotency_key"])).toEqual([K(5), K(6), K(2)]);

    const fromNovember = await results(["--since", "2026-11-01", "--format", "jsonl"]);
    expect(jsonLines(fromNovember.stdout).map((r) => r["idempotency_key"])).toEqual([K(3)]);
  });

  it("when --since is a duration, then it counts back from now", async () => {
    const pool = await openPool(db.url);
    const key = K(99);
    try {
      await pool.query(
        `INSERT INTO results (idempotency_key, external_id, status, attempts, last_attempt_at)
         VALUES ($1, 'RECENT-1', 'failed', 1, now() - interval '2 hours')`,
        [key],
      );
      const recent = await results(["--since", "3h", "--format", "jsonl"]);
      expect(recent.code, recent.stderr).toBe(0);
      expect(jsonLines(recent.stdout).map((r) => r["idempotency_key"])).toEqual([key]);
      const tooRecent = await results(["--since", "1h", "--format", "jsonl"]);
      expect(tooRecent.code, tooRecent.stderr).toBe(0);
      expect(tooRecent.stdout).toBe("");
    } finally {
      await pool.query("DELETE FROM results WHERE idempotency_key = $1", [key]);
      await pool.end();
    }
  });

  it("when --external-id is given, then its versions come out, jsonl raw with nulls and numbers", async () => {
    const { code, stdout } = await results(["--external-id", "ACME-2", "--format", "jsonl"]);
    expect(code).toBe(0);
    expect(jsonLines(stdout)).toEqual([
      {
        idempotency_key: K(2),
        external_id: "ACME-2",
        status: "failed",
        http_status: 422,
        correlation_id: '=HYPERLINK("http://x")',
        ruleset_version: "2026.10",
        attempts: 1,
        batch: "20261001T010000Z-0000b1",
        line: 3,
        first_attempt_at: "2026-10-20T01:00:00.000Z",
        last_attempt_at: "2026-10-20T01:00:00.000Z",
        error: "-invalid routing",
        trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
      },
    ]);
    const old = await results(["--external-id", "OLD-5", "--format", "jsonl", "--with-body"]);
    expect(jsonLines(old.stdout).map((r) => [r["idempotency_key"], r["status"], r["response_body"]])).toEqual(
      [
        [K(5), "superseded", null],
        [K(6), "succeeded", null],
      ],
    );
  });

  it("when --batch is given, then its rows come out in line order with the report's columns and statuses", async () => {
    const { code, stdout, stderr } = await results(["--batch", "20261001T010000Z-0000b1"]);
    expect(code, stderr).toBe(0);
    expect(stdout.split("\r\n")[0]).toBe(
      "line,external_id,idempotency_key,status,http_status,correlation_id,ruleset_version,attempts,error",
    );
    const rows = parseCsv(stdout);
    expect(rows.map((r) => [r["line"], r["status"]])).toEqual([
      ["2", "duplicate"],
      ["3", "failed"],
      ["4", "rejected"],
      ["5", "conflict"],
      ["6", "pending"],
      ["7", "superseded"],
      ["8", "failed"],
      ["9", "succeeded"],
    ]);
    expect(rows[0]).toMatchObject({
      correlation_id: "cid-1",
      attempts: "1",
      error: "already succeeded earlier; not sent again",
    });
    expect(rows[1]).toMatchObject({ correlation_id: `'=HYPERLINK("http://x")`, error: "'-invalid routing" });
    expect(rows[2]).toEqual({
      line: "4",
      external_id: "'@SUM(A1)",
      idempotency_key: "",
      status: "rejected",
      http_status: "",
      correlation_id: "",
      ruleset_version: "",
      attempts: "",
      error: 'currency: "XYZ" is not an ISO 4217 code',
    });
    expect(rows[3]).toMatchObject({ idempotency_key: K(7), http_status: "", correlation_id: "" });
    expect(rows[3]?.["error"]).toContain(K(2));
    expect(rows[5]?.["error"]).toContain(K(6));
  });

  it("when --batch is filtered by status, external_id and time, then only those rows come out; jsonl keeps the formulas raw", async () => {
    const failed = await results([
      "--batch",
      "20261001T010000Z-0000b1",
      "--status",
      "failed,rejected",
      "--format",
      "jsonl",
    ]);
    expect(failed.code, failed.stderr).toBe(0);
    const rows = jsonLines(failed.stdout);
    expect(rows.map((r) => r["line"])).toEqual([3, 4, 8]);
    expect(rows[0]).toMatchObject({
      correlation_id: '=HYPERLINK("http://x")',
      http_status: 422,
      attempts: 1,
    });
    expect(rows[1]).toMatchObject({ external_id: "@SUM(A1)", idempotency_key: null, attempts: null });

    const acme2 = await results([
      "--batch",
      "20261001T010000Z-0000b1",
      "--external-id",
      "ACME-2",
      "--format",
      "jsonl",
    ]);
    expect(jsonLines(acme2.stdout).map((r) => [r["line"], r["status"]])).toEqual([
      [3, "failed"],
      [5, "conflict"],
    ]);

    const october = await results([
      "--batch",
      "20261001T010000Z-0000b1",
      "--since",
      "2026-10-01",
      "--until",
      "2026-11-01",
    ]);
    expect(parseCsv(october.stdout).map((r) => r["line"])).toEqual(["3", "7", "9"]);
  });

  it("when the batch was rejected as a whole, then the header alone comes out and stderr says why", async () => {
    const { code, stdout, stderr } = await results(["--batch", "20261002T010000Z-0000b2"]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      "line,external_id,idempotency_key,status,http_status,correlation_id,ruleset_version,attempts,error\r\n",
    );
    expect(stderr).toContain("broken.json");
    expect(stderr).toContain("not JSON at all");
  });

  it("when a flag is wrong or the batch unknown, then it exits 1 naming the flag or the batch", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["--status", "failed,lost"],
        /--status: unknown status "lost"; .*queued, retrying, succeeded, failed, superseded/,
      ],
      [
        ["--batch", "20261001T010000Z-0000b1", "--status", "queued"],
        /--status: unknown status "queued"; .*duplicate/,
      ],
      [["--since", "last tuesday"], /--since: "last tuesday" is neither an ISO 8601 time/],
      [["--until", "2026-13-45"], /--until: "2026-13-45" is neither/],
      [["--since", "2026-11-01", "--until", "2026-10-01"], /--until: must be later than --since/],
      [
        ["--batch", "20991231T000000Z-000000"],
        /batch "20991231T000000Z-000000" is not in the results database at .*invoice-relay status/,
      ],
    ];
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await results(args);
      expect(code, args.join(" ")).toBe(1);
      expect(stderr).toMatch(message);
      expect(stdout).toBe("");
    }
  });

  it("when --batch is not of the batch id shape, then it exits 1 naming the shape before asking the database", async () => {
    const { code, stdout, stderr } = await results(["--batch", "B1:keys"]);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /--batch "B1:keys" is not a batch id: a batch id looks like YYYYMMDDTHHMMSSZ-xxxxxx/,
    );
    expect(stdout).toBe("");
  });

  it("when RESULTS_DATABASE_URL is unset, then a database filter is refused naming the setting", async () => {
    const { code, output } = await runCli(["results", "--status", "failed"], {
      REDIS_URL: "redis://127.0.0.1:1",
    });
    expect(code).toBe(1);
    expect(output).toContain(
      "--status filters the results of record in PostgreSQL: set RESULTS_DATABASE_URL",
    );
  });

  it("when the schema lacks a migration, then results says to run db migrate", async () => {
    const empty = await freshDatabase();
    try {
      const { code, output } = await runCli(["results"], { RESULTS_DATABASE_URL: empty.url });
      expect(code).toBe(1);
      expect(output).toContain("invoice-relay db migrate");
    } finally {
      await empty.drop();
    }
  });
});
