import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestFile, INGEST_CHUNKS_IN_FLIGHT, type IngestDeps } from "../../src/ingest/ingest-file.js";
import { readInvoiceFileBatches } from "../../src/ingest/read-invoice-file.js";
import { resolveNamespace } from "../../src/invoice/key.js";
import { silentLogger } from "../../src/log/logger.js";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { segment } from "../support/file-names.js";

const ROWS = 2000;
const CHUNK = 100;
/** How the test file is read: a plain CSV, no source profile. */
const PLAIN_CSV = { profile: undefined, format: "csv" } as const;
let redis: Redis;
let dir: string;

beforeAll(async () => {
  redis = testRedis();
  dir = await mkdtemp(join(tmpdir(), "invoice-relay-ingest-"));
});
afterAll(async () => {
  await redis.quit();
  await rm(dir, { recursive: true, force: true });
});

/** The store, except that its `failAt`-th registration fails as a dropped connection would. */
function failingStore(store: RedisLedger, failAt: number): Ledger {
  let calls = 0;
  return Object.assign(Object.create(store) as RedisLedger, {
    registerRows: (batchId: string, rows: Parameters<Ledger["registerRows"]>[1]) =>
      ++calls === failAt
        ? Promise.reject(new Error("Connection is closed."))
        : store.registerRows(batchId, rows),
  });
}

describe("ingest with several chunks under way", () => {
  it("when a registration fails while later chunks are under way, then no later chunk registers and a re-run leaves every row queued once with one job", async () => {
    const path = join(dir, `${randomUUID()}.csv`);
    const lines = Array.from({ length: ROWS }, (_, i) => `G-${i},EUR,DE,eu-10y`);
    await writeFile(path, ["external_id,currency,destination_country,archive_policy", ...lines].join("\n"));
    const prefix = testPrefix();
    const store = new RedisLedger(redis, prefix);
    const queue = createInvoiceQueue(redis, prefix, 10);
    const file = { batchId: "b-gap", name: segment("gap.csv"), path };
    const deps = (s: Ledger): IngestDeps => ({
      ledger: s,
      queue,
      namespace: resolveNamespace(),
      logger: silentLogger(),
      chunkSize: CHUNK,
    });
    try {
      expect(INGEST_CHUNKS_IN_FLIGHT).toBeGreaterThan(1);
      await expect(ingestFile(deps(failingStore(store, 5)), file, PLAIN_CSV)).rejects.toThrow(
        "Connection is closed.",
      );
      // Chunks register in file order: the four before the failed one, none after it.
      expect((await store.counts()).queued).toBe(4 * CHUNK);
      expect(await store.statusOf(await keyAtLine(path, 4 * CHUNK + 1))).toBe("queued");
      expect(await store.statusOf(await keyAtLine(path, 4 * CHUNK + 2))).toBeUndefined();
      expect(await store.statusOf(await keyAtLine(path, ROWS + 1))).toBeUndefined();

      const again = await ingestFile(deps(store), file, PLAIN_CSV);
      expect(again).toMatchObject({ kind: "ingested", counts: { valid: ROWS } });
      expect(await store.counts()).toEqual({
        queued: ROWS,
        retrying: 0,
        succeeded: 0,
        failed: 0,
        superseded: 0,
      });
      expect(await queue.getWaitingCount()).toBe(ROWS);
      expect(await redis.hget(store.names.pending, file.batchId)).toBe(String(ROWS));
    } finally {
      await queue.close();
    }
  });
});

/** The key of a CSV line, from a clean read of the file (keys are derived from content). */
async function keyAtLine(path: string, line: number): Promise<string> {
  for await (const batch of readInvoiceFileBatches(path, { namespace: resolveNamespace() }))
    for (const item of batch) if (item.kind === "valid" && item.line === line) return item.key;
  throw new Error(`no valid row at line ${line}`);
}
