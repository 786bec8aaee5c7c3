import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { LedgerNames } from "../../src/ledger/names.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { freshDatabase } from "../support/postgres.js";
import { spawnNode, until } from "../support/processes.js";
import { readReports, summarySchema, copySamples, tempDropDir } from "../support/drop.js";
import { readOutbox } from "../support/outbox-events.js";
import { testRedisUrl } from "../support/redis.js";
import { faultyService } from "../support/faulty-service.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_outbox_key_0123456789";
/** The invoice files in samples/ (the demo's drop folder). */
const SAMPLE_FILES = 5;
const cleanups = cleanupsAfterEach();

describe("the outbox over a nightly pass", () => {
  it("when run passes the samples against a faulty service with the outbox on, then attempts match the service's log, each key's last record event its record, and rows every report line", async () => {
    const { sim, seen } = await faultyService(API_KEY, { seed: 2027, lostRate: 0.15 });
    const drop = await tempDropDir();
    const redis = new Redis(testRedisUrl());
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      async () => {
        redis.disconnect();
        return Promise.resolve();
      },
    );
    await copySamples(drop.dir);
    const prefix = `outbox-${randomUUID()}`;
    const ledger = new RedisLedger(redis, prefix);
    // The events are read from the outbox itself, so PostgreSQL holds the exporter back: a lock on
    // `attempts` (which the ingest's look-up does not read) keeps its first read uncommitted, and the run
    // is stopped once every file is reported, before anything leaves the outbox.
    const db = await freshDatabase();
    const pool = await openPool(db.url);
    cleanups.push(async () => {
      await pool.end();
      await db.drop();
    });
    await migrate(pool, { logger: silentLogger() });
    const lock = await pool.connect();
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE attempts IN EXCLUSIVE MODE");

    const run = spawnNode(
      "workers/cli.js",
      ["run"],
      cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
        {
          BACKOFF_BASE_MS: "50",
          BACKOFF_CAP_MS: "500",
          RESULTS_DATABASE_URL: db.url,
        },
      ),
    );
    const batches = new BatchStore(redis, prefix);
    await until(
      async () => {
        const ids = await batches.list();
        const states = await Promise.all(ids.map(async (id) => (await batches.get(id))?.state));
        return ids.length === SAMPLE_FILES && states.every((state) => state === "reported");
      },
      120_000,
      "every sample file reported",
    );
    run.child.kill("SIGKILL");
    await run.exited;
    await lock.query("ROLLBACK");
    lock.release();

    const events = await readOutbox(redis, prefix);
    // attempts per key, in their numbers' order, against what the service logged (lost: a network error here)
    const ours = new Map<string, [number, string][]>();
    for (const e of events)
      if (e.t === "attempt")
        ours.set(e.key, [...(ours.get(e.key) ?? []), [e.n, e.net === null ? String(e.http) : "network"]]);
    const theirs = new Map<string, string[]>();
    for (const a of seen)
      if (a.idempotencyKey !== undefined)
        theirs.set(a.idempotencyKey, [
          ...(theirs.get(a.idempotencyKey) ?? []),
          a.lost ? "network" : String(a.status),
        ]);
    const ordered = new Map(
      [...ours].map(([key, list]) => [key, list.sort((x, y) => x[0] - y[0]).map(([, what]) => what)]),
    );
    expect(Object.fromEntries(ordered)).toEqual(Object.fromEntries(theirs));
    expect(seen.some((a) => a.lost)).toBe(true);
    for (const list of ours.values()) expect(list.map(([n]) => n)).toEqual(list.map((_, i) => i + 1));

    // each key's last record event is its record
    const last = new Map<string, (typeof events)[number]>();
    for (const e of events) if (e.t === "record") last.set(e.key, e);
    const keys = [...last.keys()];
    expect(keys.length).toBeGreaterThan(0);
    const records = await ledger.getMany(keys);
    for (const [i, key] of keys.entries()) {
      const r = records[i];
      const final = r?.status === "succeeded" || r?.status === "failed";
      expect(last.get(key)).toEqual({
        t: "record",
        key,
        eid: r?.external_id,
        status: r?.status,
        http: r?.http_status ?? null,
        cid: r?.correlation_id ?? null,
        ruleset: r?.ruleset_version ?? null,
        attempts: r?.attempts,
        first: r?.first_attempt_at ?? null,
        last: r?.last_attempt_at ?? null,
        error: r?.error ?? null,
        by: r?.superseded_by ?? null,
        body: final ? (r.response_body ?? null) : null,
      });
    }
    expect(new Set(keys)).toEqual(new Set(theirs.keys()));

    // the rows events cover every line of every report, with its key and status
    const reports = [...(await readReports(drop.dir)).values()];
    expect(reports.length).toBeGreaterThan(1);
    for (const report of reports) {
      const batch = summarySchema.parse(report.summary).batch_id;
      const rows = events.flatMap((e) => (e.t === "rows" && e.batch === batch ? e.rows : []));
      const byLine = new Map(rows.map((row) => [row[0], row]));
      expect(report.rows.map((r) => byLine.get(r.line)?.slice(0, 3))).toEqual(
        report.rows.map((r) => [
          r.line,
          r.status === "rejected" ? null : r.idempotency_key,
          r.status === "pending" ? "queued" : r.status,
        ]),
      );
      const reported = events.filter((e) => e.t === "batch" && e.batch === batch).at(-1);
      expect(reported?.t === "batch" ? [reported.state, reported.report_csv !== null] : []).toEqual([
        "reported",
        true,
      ]);
    }
    expect(await redis.exists(new LedgerNames(prefix).outboxOn)).toBe(1);
  });
});
