import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Queue, Worker, type Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { invoiceJson } from "../../src/invoice/key.js";
import { createRedis } from "../../src/queue/connection.js";
import { INVOICE_QUEUE } from "../../src/queue/invoice-queue.js";
import type { InvoiceJobData } from "../../src/queue/job-data.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { cli, opsSetup, statusJson, type OpsSetup } from "./ops-support.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

const CSV = "external_id,currency,destination_country,archive_policy\nINV-A,EUR,DE,eu-10y\n";

/**
 * A worker that records the key failed, as the real one does when the service refuses an invoice, and
 * then holds the job (still active, locked) until told to finish: the moment a re-drop must cope with.
 */
function holdingWorker(s: OpsSetup) {
  const redis = createRedis(s.env["REDIS_URL"] ?? "", "worker");
  const store = new RedisLedger(redis, s.env["QUEUE_PREFIX"] ?? "");
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held: (key: string) => void = () => undefined;
  const holding = new Promise<string>((resolve) => (held = resolve));
  const worker = new Worker<InvoiceJobData>(
    INVOICE_QUEUE,
    async (job: Job<InvoiceJobData>) => {
      const key = job.id ?? "";
      await store.recordFailed(key, {
        httpStatus: 422,
        error: "HTTP 422: refused",
        document: invoiceJson(job.data.invoice),
      });
      held(key);
      await gate;
      return "failed";
    },
    { connection: redis, prefix: s.env["QUEUE_PREFIX"] ?? "" },
  );
  cleanups.push(async () => {
    await worker.close();
    redis.disconnect();
  });
  return { worker, holding, release };
}

describe("a re-drop while the failed invoice's job is still held by a worker", () => {
  it("when the same invoice is dropped again while its failed job is active, then the key is not stranded: run sends it and exits 0", async () => {
    const s = await opsSetup();
    cleanups.push(() => s.cleanup());
    await writeFile(join(s.dir, "night1.csv"), CSV);
    const first = await cli(["ingest"], s.env);
    expect(first.code, first.stderr).toBe(0);

    const w = holdingWorker(s);
    const key = await w.holding;
    await writeFile(join(s.dir, "night2.csv"), CSV);
    const again = await cli(["ingest"], s.env);
    expect(again.code, again.stderr).toBe(0);
    const completed = once(w.worker, "completed");
    w.release();
    await completed;
    await w.worker.close();

    const run = await cli(["run", "--deadline", "20s"], s.env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(s.sim.stats().effects).toMatchObject({ total: 1, distinctKeys: 1 });
    expect(s.sim.attempts(key).length).toBeGreaterThan(0);
    const status = await statusJson(s.env);
    expect(status.keys).toMatchObject({ queued: 0, succeeded: 1, failed: 0 });
    expect(status.batches.map((b) => [b.file, b.state, b.counts?.succeeded])).toEqual([
      ["night2.csv", "reported", 1],
      ["night1.csv", "reported", 1],
    ]);
  });
});

describe("an invoice waiting in the store with no job", () => {
  it("when a queued invoice's job is gone (Redis lost it), then status says so and run gives it its job back and exits 0", async () => {
    const s = await opsSetup();
    cleanups.push(() => s.cleanup());
    await writeFile(join(s.dir, "night1.csv"), CSV);
    const ingest = await cli(["ingest"], s.env);
    expect(ingest.code, ingest.stderr).toBe(0);
    const redis = createRedis(s.env["REDIS_URL"] ?? "", "producer");
    const queue = new Queue(INVOICE_QUEUE, { connection: redis, prefix: s.env["QUEUE_PREFIX"] ?? "" });
    cleanups.push(async () => {
      await queue.close();
      redis.disconnect();
    });
    await queue.obliterate({ force: true });

    const status = await cli(["status"], s.env);
    expect(status.stdout).toMatch(/1 invoice\(s\) wait with no job/);
    const run = await cli(["run", "--deadline", "30s"], s.env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(s.sim.stats().effects).toMatchObject({ total: 1, distinctKeys: 1 });
    expect((await statusJson(s.env)).keys).toMatchObject({ queued: 0, succeeded: 1 });
  });
});
