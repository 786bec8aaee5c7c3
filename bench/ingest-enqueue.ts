// Part of npm run bench:ingest: 200,000 rows claimed, checked and enqueued by invoice-relay's ingest,
// beside a raw BullMQ addBulk of the same jobs, in the same run and against the same Redis.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Queue } from "bullmq";
import { claim, dropFolder, ensureDropFolder } from "../src/ingest/drop-folder.js";
import { ingestClaimed } from "../src/use-cases/drop-pass.js";
import { INGEST_CHUNK_ROWS, INGEST_CHUNKS_IN_FLIGHT } from "../src/ingest/ingest-file.js";
import { readInvoiceFileBatches } from "../src/ingest/read-invoice-file.js";
import { WorkWindow } from "../src/ingest/work-window.js";
import { resolveNamespace } from "../src/invoice/key.js";
import { silentLogger } from "../src/log/logger.js";
import { createRedis } from "../src/queue/connection.js";
import { createInvoiceQueue, INVOICE_QUEUE, invoiceJobOptions } from "../src/queue/invoice-queue.js";
import { INVOICE_JOB_NAME, type InvoiceJobData } from "../src/queue/job-data.js";
import { BatchStore } from "../src/ledger/batch-store.js";
import type { RedisClient } from "../src/ledger/redis-client.js";
import { RedisLedger } from "../src/ledger/redis-ledger.js";
import { writeCsv } from "./generate.js";
import { fileName } from "../src/names/file-name.js";

export interface EnqueueFigures {
  readonly rows: number;
  readonly enqueueSeconds: number;
  /** Plain `addBulk` calls, one chunk after another. */
  readonly rawSeconds: number;
  /** The same with as many chunks under way as ingest keeps. */
  readonly rawPipelinedSeconds: number;
}

export async function measureEnqueue(redisUrl: string, dir: string, rows: number): Promise<EnqueueFigures> {
  const folder = dropFolder(join(dir, "drop"));
  await ensureDropFolder(folder);
  const source = join(folder.root, "enqueue.csv");
  await writeCsv(source, rows, 5_000_000);
  const namespace = resolveNamespace();
  const redis = createRedis(redisUrl, "producer");
  try {
    // invoice-relay: claim (atomic rename), whole-file check, keyed read, store registration, addBulk.
    const prefix = `bench-ingest-${randomUUID()}`;
    const queue = createInvoiceQueue(redis, prefix, 10);
    const deps = {
      folder,
      redis,
      ledger: new RedisLedger(redis, prefix),
      batches: new BatchStore(redis, prefix),
      queue,
      namespace,
      logger: silentLogger(),
    };
    const started = performance.now();
    const name = fileName("enqueue.csv");
    const file = name === undefined ? undefined : await claim(folder, name);
    if (file === undefined) throw new Error("could not claim the benchmark file");
    const result = await ingestClaimed(deps, file);
    const enqueueSeconds = (performance.now() - started) / 1000;
    if (result.kind !== "ingested" || result.enqueued !== rows)
      throw new Error(`ingest did not enqueue ${rows}: ${JSON.stringify(result)}`);
    await queue.close();

    // Raw BullMQ: the same job ids and payloads, prepared beforehand, added with addBulk in the same chunks.
    const jobs: RawJob[] = [];
    for await (const batch of readInvoiceFileBatches(file.path, { namespace })) {
      for (const item of batch) {
        if (item.kind === "valid")
          jobs.push({
            name: INVOICE_JOB_NAME,
            data: { invoice: item.invoice, batch: "raw", line: item.line },
            opts: { jobId: item.key },
          });
      }
    }
    // As a user would write it, one chunk after another; then with as many under way as ingest keeps.
    const rawSeconds = await timeAddBulk(redis, jobs, 1);
    const rawPipelinedSeconds = await timeAddBulk(redis, jobs, INGEST_CHUNKS_IN_FLIGHT);
    return { rows, enqueueSeconds, rawSeconds, rawPipelinedSeconds };
  } finally {
    redis.disconnect();
  }
}

type RawJob = { name: string; data: InvoiceJobData; opts: { jobId: string } };

/** Seconds to add `jobs` to a fresh queue with plain `addBulk` calls of ingest's chunk size. */
async function timeAddBulk(redis: RedisClient, jobs: readonly RawJob[], underWay: number): Promise<number> {
  const raw = new Queue<InvoiceJobData>(INVOICE_QUEUE, {
    connection: redis,
    prefix: `bench-raw-${randomUUID()}`,
    defaultJobOptions: invoiceJobOptions(10),
  });
  try {
    const started = performance.now();
    const chunks = new WorkWindow(underWay);
    for (let i = 0; i < jobs.length; i += INGEST_CHUNK_ROWS)
      await chunks.start(() => raw.addBulk(jobs.slice(i, i + INGEST_CHUNK_ROWS)));
    await chunks.settle();
    return (performance.now() - started) / 1000;
  } finally {
    await raw.close();
  }
}
