import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PastResultsUnavailableError } from "../../src/ingest/errors/past-results-unavailable-error.js";
import { ingestFile, type IngestDeps } from "../../src/ingest/ingest-file.js";
import { readInvoiceFileBatches } from "../../src/ingest/read-invoice-file.js";
import { resolveNamespace } from "../../src/invoice/key.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { RedisRecordRestorer } from "../../src/ledger/restore-records.js";
import { silentLogger } from "../../src/log/logger.js";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { migrate } from "../../src/records/migrations.js";
import { pastResults, type Queryable } from "../../src/records/past-results.js";
import { createPool, openPool, type Pool } from "../../src/records/pool.js";
import { passSignal } from "../../src/lifecycle/pass-signal.js";
import { openWaits } from "../../src/lifecycle/waits.js";
import { startSilentPostgres } from "../support/silent-postgres.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { segment } from "../support/file-names.js";

const ROWS = 10;
const CHUNK = 4;
const PLAIN_CSV = { profile: undefined, format: "csv" } as const;
let redis: Redis;
let dir: string;
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  redis = testRedis();
  dir = await mkdtemp(join(tmpdir(), "invoice-relay-past-"));
  db = await freshDatabase();
  pool = await openPool(db.url);
  await migrate(pool, { logger: silentLogger() });
});
afterAll(async () => {
  await redis.quit();
  await pool.end();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

/** The pool, counting the queries made through it. */
function counted(inner: Queryable): Queryable & { readonly queries: string[] } {
  const queries: string[] = [];
  return {
    queries,
    query: (text, values) => {
      queries.push(text);
      return inner.query(text, values);
    },
  };
}

async function csvFile(): Promise<{
  path: string;
  keys: Map<number, string>;
  idAt: (line: number) => string;
}> {
  const path = join(dir, `${randomUUID()}.csv`);
  const tag = randomUUID().slice(0, 8);
  const lines = Array.from({ length: ROWS }, (_, i) => `P-${tag}-${i},EUR,DE,eu-10y`);
  await writeFile(path, ["external_id,currency,destination_country,archive_policy", ...lines].join("\n"));
  const keys = new Map<number, string>();
  for await (const batch of readInvoiceFileBatches(path, { namespace: resolveNamespace() }))
    for (const item of batch) if (item.kind === "valid") keys.set(item.line, item.key);
  return { path, keys, idAt: (line) => `P-${tag}-${line - 2}` };
}

async function insertResult(key: string, status: string, cid: string, externalId = "x"): Promise<void> {
  await pool.query(
    `INSERT INTO results (idempotency_key, external_id, status, http_status, correlation_id, ruleset_version,
       attempts, first_attempt_at, last_attempt_at, response_body)
     VALUES ($1, $4, $2, 201, $3, 'rs-7', 3, to_timestamp(1700000000.123), to_timestamp(1700000009.5), '{"id": 1}')`,
    [key, status, cid, externalId],
  );
}

function setup(db: Queryable) {
  const prefix = testPrefix();
  const store = new RedisLedger(redis, prefix);
  const queue = createInvoiceQueue(redis, prefix, 10);
  const results = counted(db);
  const deps: IngestDeps = {
    ledger: store,
    queue,
    namespace: resolveNamespace(),
    logger: silentLogger(),
    chunkSize: CHUNK,
    beyondRetention: {
      results: { lookUp: (asked) => pastResults(results, "postgres://relay@db.test/relay", asked) },
      ledger: new RedisRecordRestorer(redis, prefix),
      host: "db.test",
      retryMs: { first: 10, cap: 40 },
    },
  };
  return { store, queue, deps, results, batches: new BatchStore(redis, prefix) };
}

describe("ingest asks the results of record about keys Redis does not know", () => {
  it("when a key succeeded in PostgreSQL, then its row is a duplicate with the original answer, a failed one is sent again, and each chunk makes one query", async () => {
    const { path, keys } = await csvFile();
    const [doneKey, failedKey] = [keys.get(3), keys.get(7)];
    if (doneKey === undefined || failedKey === undefined) throw new Error("rows not keyed");
    await insertResult(doneKey, "succeeded", "orig-cid-3");
    await insertResult(failedKey, "failed", "orig-cid-7");
    const { store, queue, deps, results, batches } = setup(pool);

    const outcome = await ingestFile(deps, { batchId: "b-past", name: segment("past.csv"), path }, PLAIN_CSV);

    expect(outcome).toMatchObject({ kind: "ingested", counts: { valid: ROWS }, enqueued: ROWS - 1 });
    expect(results.queries).toHaveLength(Math.ceil(ROWS / CHUNK));
    expect(await batches.decisions("b-past", [3, 7])).toEqual(["duplicate", null]);
    expect(await store.get(doneKey)).toMatchObject({
      status: "succeeded",
      correlation_id: "orig-cid-3",
      ruleset_version: "rs-7",
      http_status: 201,
      attempts: 3,
      first_attempt_at: 1_700_000_000_123,
      last_attempt_at: 1_700_000_009_500,
      response_body: '{"id": 1}',
    });
    expect(await store.statusOf(failedKey)).toBe("queued");
    expect(await store.counts()).toMatchObject({ queued: ROWS - 1, succeeded: 1 });
    expect(await queue.getJob(doneKey)).toBeUndefined();
    expect(await queue.getWaitingCount()).toBe(ROWS - 1);

    // A re-run of the same batch (after a crash): the same decisions, nothing restored or counted twice.
    await ingestFile(deps, { batchId: "b-past", name: segment("past.csv"), path }, PLAIN_CSV);
    expect(results.queries).toHaveLength(2 * Math.ceil(ROWS / CHUNK));
    expect(await batches.decisions("b-past", [3, 7])).toEqual(["duplicate", null]);
    expect(await store.counts()).toMatchObject({ queued: ROWS - 1, succeeded: 1 });
    expect(await queue.getWaitingCount()).toBe(ROWS - 1);
  });

  it("when other versions of rows' external_ids succeeded or failed in PostgreSQL, then those rows are conflict or sent with the failed version superseded, still one query per chunk", async () => {
    const { path, keys, idAt } = await csvFile();
    const [changedKey, correctedKey] = [keys.get(4), keys.get(9)];
    if (changedKey === undefined || correctedKey === undefined) throw new Error("rows not keyed");
    const [earlierKey, failedKey] = [randomUUID(), randomUUID()];
    await insertResult(earlierKey, "succeeded", "earlier-cid", idAt(4));
    await insertResult(failedKey, "failed", "failed-cid", idAt(9));
    const { store, queue, deps, results, batches } = setup(pool);

    const outcome = await ingestFile(
      deps,
      { batchId: "b-versions", name: segment("versions.csv"), path },
      PLAIN_CSV,
    );

    expect(outcome).toMatchObject({ kind: "ingested", counts: { valid: ROWS }, enqueued: ROWS - 1 });
    expect(results.queries).toHaveLength(Math.ceil(ROWS / CHUNK));
    expect(await batches.decisions("b-versions", [4, 9])).toEqual([`conflict:${earlierKey}`, null]);
    expect(await store.get(changedKey)).toBeUndefined();
    expect(await queue.getJob(changedKey)).toBeUndefined();
    expect(await store.statusOf(correctedKey)).toBe("queued");
    expect(await store.get(failedKey)).toMatchObject({ status: "superseded", superseded_by: correctedKey });
    expect(await store.counts()).toMatchObject({ queued: ROWS - 1, succeeded: 1, superseded: 1, failed: 0 });
  });

  it("when the first chunk's look-up answers after the later chunks', then its succeeded key is still a duplicate and nothing is sent", async () => {
    const { path, keys } = await csvFile();
    const doneKey = keys.get(3);
    if (doneKey === undefined) throw new Error("rows not keyed");
    await insertResult(doneKey, "succeeded", "slow-cid-3");
    // The chunk holding line 3 is answered last: the chunks after it are registered meanwhile.
    const slowFirst: Queryable = {
      query: async (text, values) => {
        const asked = values[0];
        if (Array.isArray(asked) && asked.includes(doneKey)) await new Promise((r) => setTimeout(r, 150));
        return pool.query(text, [...values]);
      },
    };
    const { store, queue, deps, batches } = setup(slowFirst);

    const outcome = await ingestFile(deps, { batchId: "b-slow", name: segment("slow.csv"), path }, PLAIN_CSV);

    expect(outcome).toMatchObject({ kind: "ingested", enqueued: ROWS - 1 });
    expect(await batches.decisions("b-slow", [3])).toEqual(["duplicate"]);
    expect(await store.get(doneKey)).toMatchObject({ status: "succeeded", correlation_id: "slow-cid-3" });
    expect(await store.counts()).toMatchObject({ queued: ROWS - 1, succeeded: 1 });
    expect(await queue.getJob(doneKey)).toBeUndefined();
  });

  it("when PostgreSQL does not answer, then the ingest waits with nothing of the file registered, and goes on once it answers", async () => {
    const { path } = await csvFile();
    let refusals = 0;
    let down = true;
    let refusedTwice: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => (refusedTwice = resolve));
    const flaky: Queryable = {
      query: (text, values) => {
        if (!down) return pool.query(text, [...values]);
        if (++refusals === 2) refusedTwice();
        return Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:1"));
      },
    };
    const { store, deps, batches, queue } = setup(flaky);

    const ingest = ingestFile(deps, { batchId: "b-wait", name: segment("wait.csv"), path }, PLAIN_CSV);
    await twice;
    expect(await store.counts()).toEqual({ queued: 0, retrying: 0, succeeded: 0, failed: 0, superseded: 0 });
    expect(await batches.decisions("b-wait", [2])).toEqual([null]);
    down = false;

    expect(await ingest).toMatchObject({ kind: "ingested", counts: { valid: ROWS }, enqueued: ROWS });
    expect(await store.counts()).toMatchObject({ queued: ROWS });
    expect(await queue.getWaitingCount()).toBe(ROWS);
  });

  it("when PostgreSQL does not answer before the deadline, then ingest stops with PastResultsUnavailableError and nothing of the file is registered", async () => {
    const { path } = await csvFile();
    const down: Queryable = { query: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:1")) };
    const { store, deps, batches } = setup(down);
    const beyond = deps.beyondRetention;
    if (beyond === undefined) throw new Error("no look-up");

    const failed = await ingestFile(
      {
        ...deps,
        beyondRetention: { ...beyond, until: passSignal(new AbortController().signal, Date.now() + 200) },
      },
      { batchId: "b-down", name: segment("down.csv"), path },
      PLAIN_CSV,
    ).catch((error: unknown) => error);

    expect(failed).toBeInstanceOf(PastResultsUnavailableError);
    expect(String(failed)).toContain("down.csv");
    expect(String(failed)).toContain("ECONNREFUSED");
    expect(String(failed)).toContain("resumes it");
    expect(await store.counts()).toEqual({ queued: 0, retrying: 0, succeeded: 0, failed: 0, superseded: 0 });
    expect(await batches.decisions("b-down", [2])).toEqual([null]);
  });

  it("when PostgreSQL takes the connection and never answers the look-up, then ingest ends by the pass's deadline naming PostgreSQL, and the wait is named while it lasts", async () => {
    const { path } = await csvFile();
    const silent = await startSilentPostgres();
    const stalled = createPool(silent.url);
    const { store, deps, batches } = setup(stalled);
    const beyond = deps.beyondRetention;
    if (beyond === undefined) throw new Error("no look-up");
    const started = Date.now();
    const until = passSignal(new AbortController().signal, started + 1000);
    const named = new Promise<string[]>((resolve) => {
      const look = setInterval(() => {
        if (openWaits().some((w) => w.includes("PostgreSQL"))) {
          clearInterval(look);
          resolve(openWaits());
        }
      }, 20);
      until.addEventListener("abort", () => {
        clearInterval(look);
        resolve(openWaits());
      });
    });

    const failed = await ingestFile(
      { ...deps, beyondRetention: { ...beyond, until } },
      { batchId: "b-silent", name: segment("silent.csv"), path },
      PLAIN_CSV,
    ).catch((error: unknown) => error);
    await silent.close();
    await stalled.end();

    expect(failed).toBeInstanceOf(PastResultsUnavailableError);
    expect(String(failed)).toContain("silent.csv");
    expect(String(failed)).toContain("PostgreSQL at db.test did not answer before the pass's --deadline");
    expect(await named).toContainEqual(
      expect.stringContaining("PostgreSQL at db.test (RESULTS_DATABASE_URL)"),
    );
    // Generous: by the deadline, not by a timeout of the driver's own.
    expect(Date.now() - started).toBeLessThan(1000 + 10_000);
    expect(await store.counts()).toEqual({ queued: 0, retrying: 0, succeeded: 0, failed: 0, superseded: 0 });
    expect(await batches.decisions("b-silent", [2])).toEqual([null]);
  }, 20_000);

  it("when PostgreSQL refuses the query itself, then ingest stops at once with PastResultsUnavailableError", async () => {
    const { path } = await csvFile();
    const refusing: Queryable = { query: () => pool.query("SELECT * FROM no_such_table", []) };
    const { store, deps } = setup(refusing);

    const failed = await ingestFile(
      deps,
      { batchId: "b-refused", name: segment("refused.csv"), path },
      PLAIN_CSV,
    ).catch((error: unknown) => error);

    expect(failed).toBeInstanceOf(PastResultsUnavailableError);
    expect(String(failed)).toContain("no_such_table");
    expect(await store.counts()).toMatchObject({ queued: 0 });
  });
});
