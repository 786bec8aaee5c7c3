// npm run bench:submit — 20,000 invoices through queue + worker + results store against the simulator,
// compared in the same run with a no-op BullMQ worker and a plain concurrency-limited fetch loop.
import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { loadConfig, requireSubmitConfig } from "../src/config/load.js";
import { RedisServer } from "../src/dev/redis-server.js";
import { invoiceJson, resolveNamespace, deriveKey } from "../src/invoice/key.js";
import { normaliseRecord } from "../src/invoice/normalise.js";
import type { CanonicalInvoice } from "../src/invoice/schema.js";
import { silentLogger } from "../src/log/logger.js";
import { createRedis } from "../src/queue/connection.js";
import { createInvoiceQueue, enqueueInvoices } from "../src/queue/invoice-queue.js";
import { startSubmission } from "../src/queue/submission-service.js";
import { RedisResultsStore } from "../src/results/redis-results-store.js";
import { syntheticInvoice } from "./generate.js";
import { percentile, round, startSimProcess } from "./support.js";

const N = Number(process.env["BENCH_INVOICES"] ?? 20_000);
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 64);
const API_KEY = "irs_live_bench_key_000000";

function invoices(tag: string): { key: string; invoice: CanonicalInvoice }[] {
  const ns = resolveNamespace(tag);
  return Array.from({ length: N }, (_, i) => {
    const v = syntheticInvoice(i);
    const r = normaliseRecord({
      external_id: v.external_id,
      currency: v.currency,
      destination_country: v.country,
      archive_policy: v.policy,
    });
    if (!r.ok) throw new Error("bad synthetic invoice");
    return { key: deriveKey(r.invoice, ns), invoice: r.invoice };
  });
}

const redis = process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
const redisUrl = process.env["REDIS_URL"] ?? redis?.url ?? "";
const sim = await startSimProcess(API_KEY);
try {
  // 1. invoice-relay: register + enqueue, then a worker drains the queue; latency is enqueue → final.
  const prefix = `bench-${randomUUID()}`;
  const config = requireSubmitConfig(
    loadConfig({
      REDIS_URL: redisUrl,
      INVOICE_API_URL: sim.url,
      INVOICE_API_KEY: API_KEY,
      QUEUE_PREFIX: prefix,
      SUBMIT_CONCURRENCY: String(CONCURRENCY),
      LOG_LEVEL: "silent",
    }),
  );
  const docs = invoices(prefix);
  const producer = createRedis(redisUrl, "producer");
  const store = new RedisResultsStore(producer, prefix);
  const queue = createInvoiceQueue(producer, prefix, config.maxAttempts);
  const enqueuedAt = new Map<string, number>();
  const latencies: number[] = [];
  let finals = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  const service = await startSubmission(config, silentLogger(), {
    onOutcome: (key, outcome) => {
      if (outcome.kind !== "succeeded" && outcome.kind !== "failed" && outcome.kind !== "skipped") return;
      latencies.push(performance.now() - (enqueuedAt.get(key) ?? 0));
      if (++finals === N) resolveDone();
    },
  });
  const relayStart = performance.now();
  for (let i = 0; i < N; i += 1000) {
    const chunk = docs.slice(i, i + 1000);
    await store.registerRows(
      "bench",
      chunk.map((d, j) => ({
        line: i + j + 2,
        key: d.key,
        externalId: d.invoice.external_id,
        document: invoiceJson(d.invoice),
      })),
    );
    const at = performance.now();
    for (const d of chunk) enqueuedAt.set(d.key, at);
    await enqueueInvoices(
      queue,
      chunk.map((d, j) => ({ key: d.key, data: { invoice: d.invoice, batch: "bench", line: i + j + 2 } })),
    );
  }
  await done;
  const relaySeconds = (performance.now() - relayStart) / 1000;
  await service.close(5000);
  const counts = await store.counts();
  await queue.close();
  if (counts.succeeded !== N)
    throw new Error(`relay: expected ${N} succeeded, got ${JSON.stringify(counts)}`);
  latencies.sort((a, b) => a - b);

  // 2. A bare BullMQ worker with a no-op processor, same Redis, same job payloads.
  const noopPrefix = `bench-noop-${randomUUID()}`;
  const noopQueue = new Queue("noop", { connection: producer, prefix: noopPrefix });
  for (let i = 0; i < N; i += 1000) {
    await noopQueue.addBulk(
      docs.slice(i, i + 1000).map((d) => ({
        name: "invoice",
        data: { invoice: d.invoice, batch: "bench", line: 0 },
        opts: { jobId: d.key, removeOnComplete: true },
      })),
    );
  }
  let completed = 0;
  let noopDone: () => void = () => undefined;
  const noopFinished = new Promise<void>((r) => (noopDone = r));
  const noopStart = performance.now();
  const noop = new Worker("noop", () => Promise.resolve(), {
    connection: createRedis(redisUrl, "worker"),
    prefix: noopPrefix,
    concurrency: CONCURRENCY,
  });
  noop.on("completed", () => {
    if (++completed === N) noopDone();
  });
  await noopFinished;
  const noopSeconds = (performance.now() - noopStart) / 1000;
  await noop.close();
  await noopQueue.close();

  // 3. What a user would write instead: fetch with a concurrency limit, no queue, no store.
  const fetchDocs = invoices(`fetch-${randomUUID()}`);
  let next = 0;
  const fetchStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < fetchDocs.length) {
        const d = fetchDocs[next++];
        if (d === undefined) break;
        const res = await fetch(`${sim.url}/api/v1/invoices`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${API_KEY}`,
            "idempotency-key": d.key,
            "content-type": "application/json",
          },
          body: invoiceJson(d.invoice),
        });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`fetch loop got ${res.status}`);
      }
    }),
  );
  const fetchSeconds = (performance.now() - fetchStart) / 1000;
  producer.disconnect();

  const relay = N / relaySeconds;
  const noopRate = N / noopSeconds;
  const fetchRate = N / fetchSeconds;
  console.log(
    `invoices: ${N}, concurrency ${CONCURRENCY}, Redis ${redis === undefined ? redisUrl : "private, AOF everysec"}`,
  );
  console.log(
    `invoice-relay (queue + worker + results store): ${round(relay)} invoices/s (${relaySeconds.toFixed(2)} s)`,
  );
  console.log(
    `bare BullMQ worker, no-op processor:           ${round(noopRate)} jobs/s (${noopSeconds.toFixed(2)} s)`,
  );
  console.log(
    `concurrency-limited fetch loop, no queue:       ${round(fetchRate)} invoices/s (${fetchSeconds.toFixed(2)} s)`,
  );
  console.log(
    `relay / no-op = ${(relay / noopRate).toFixed(2)}, relay / fetch loop = ${(relay / fetchRate).toFixed(2)}`,
  );
  console.log(
    `enqueue → final latency: p50 ${round(percentile(latencies, 50))} ms, p99 ${round(percentile(latencies, 99))} ms`,
  );
  console.log(
    JSON.stringify({
      relay_per_s: round(relay),
      bullmq_noop_per_s: round(noopRate),
      fetch_loop_per_s: round(fetchRate),
      p50_ms: round(percentile(latencies, 50)),
      p99_ms: round(percentile(latencies, 99)),
    }),
  );
} finally {
  await sim.stop();
  await redis?.dispose();
}
