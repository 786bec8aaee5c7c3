import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimedContent, findContentChange } from "../../src/ingest/claimed-content.js";
import { claimedName, dropFolder, ensureDropFolder, newBatchId } from "../../src/ingest/drop-folder.js";
import { dropPass } from "../../src/use-cases/drop-pass.js";
import { readInvoiceFileBatches } from "../../src/ingest/read-invoice-file.js";
import { resolveNamespace } from "../../src/invoice/key.js";
import { silentLogger } from "../../src/log/logger.js";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { testPrefix, testRedis } from "../support/redis.js";
import { segment } from "../support/file-names.js";

const HEADER = "external_id,currency,destination_country,archive_policy\n";
const rows = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `C-${from + i},EUR,DE,eu-10y\n`).join("");

let dir: string;
let redis: Redis;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "invoice-relay-claimed-"));
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
  await rm(dir, { recursive: true, force: true });
});

describe("what was claimed of a file", () => {
  it("when a measured file is unchanged, grown, rewritten or cut, then only the unchanged one passes, and the change says how", async () => {
    const path = join(dir, "measured.csv");
    await writeFile(path, HEADER + rows(0, 10));
    const claimed = await claimedContent(path);
    expect(claimed.size).toBe(Buffer.byteLength(HEADER + rows(0, 10)));
    expect(await findContentChange(path, "measured.csv", claimed)).toBeUndefined();

    await appendFile(path, rows(10, 12));
    expect(await findContentChange(path, "measured.csv", claimed)).toMatchObject({
      code: "FILE_CHANGED_AFTER_CLAIM",
      nowBytes: claimed.size + Buffer.byteLength(rows(10, 12)),
      prefixIntact: true,
    });
    await writeFile(path, (HEADER + rows(0, 10)).replace("C-3,", "X-3,"));
    expect(await findContentChange(path, "measured.csv", claimed)).toMatchObject({ prefixIntact: false });
    await writeFile(path, HEADER + rows(0, 9));
    expect(await findContentChange(path, "measured.csv", claimed)).toMatchObject({ prefixIntact: false });
  });

  it("when a file grew after its claim, then reading the claimed length yields only the claimed rows", async () => {
    const path = join(dir, "read.csv");
    await writeFile(path, HEADER + rows(0, 5));
    const { size } = await claimedContent(path);
    await appendFile(path, rows(5, 50));
    const lines: number[] = [];
    for await (const batch of readInvoiceFileBatches(path, { namespace: resolveNamespace(), length: size }))
      for (const item of batch) if (item.kind === "valid") lines.push(item.line);
    expect(lines).toEqual([2, 3, 4, 5, 6]);
  });
});

describe("resuming a claimed file", () => {
  async function resume(name: string, change: (path: string) => Promise<void>) {
    const prefix = testPrefix();
    const folder = dropFolder(join(dir, `resume-${name}`));
    await ensureDropFolder(folder);
    const batchId = newBatchId();
    const path = join(folder.processing, claimedName(batchId, segment(name)));
    await writeFile(path, HEADER + rows(0, 20));
    const batches = new BatchStore(redis, prefix);
    // As the run that claimed it left it: measured, still ingesting.
    await batches.open({
      id: batchId,
      file: name,
      format: "csv",
      path,
      host: "earlier",
      ...(await claimedContent(path)),
    });
    await change(path);
    const queue = createInvoiceQueue(redis, prefix, 10);
    try {
      const passed = await dropPass(
        {
          folder,
          redis,
          ledger: new RedisLedger(redis, prefix),
          batches,
          queue,
          namespace: resolveNamespace(),
          logger: silentLogger(),
        },
        // Not settled yet: the file is not taken again by this pass.
        60_000,
      );
      return {
        passed,
        meta: await batches.require(batchId),
        waiting: await queue.getWaitingCount(),
        batches,
      };
    } finally {
      await queue.close();
    }
  }

  it("when a file left in processing/ mid-ingest has grown since its claim, then the pass ingests exactly the claimed rows, and the rest waits to be taken again once the file has settled", async () => {
    const { passed, meta, waiting } = await resume("growing.csv", (path) => appendFile(path, rows(20, 40)));
    expect(passed.map((p) => p.result.kind)).toEqual(["ingested"]);
    expect(meta).toMatchObject({ state: "ingested", rows: 20 });
    expect(waiting).toBe(20);
  });

  it("when a file left in processing/ mid-ingest was rewritten since its claim, then the pass does not ingest it further, marks its batch changed and keeps the file", async () => {
    const { passed, meta, waiting, batches } = await resume("rewritten.csv", (path) =>
      writeFile(path, HEADER + rows(0, 20).replace("EUR", "USD")),
    );
    expect(passed.map((p) => p.result.kind)).toEqual(["changed"]);
    expect(meta).toMatchObject({
      state: "changed",
      file_error: expect.stringMatching(/rewritten\.csv changed after it was claimed/) as unknown,
    });
    expect(waiting).toBe(0);
    expect(await batches.complete()).toEqual([]);
  });
});
