// npm run bench:submit — 20,000 invoices through queue + worker + results store against the simulator,
// compared in the same run with a no-op BullMQ worker and a plain concurrency-limited fetch loop, and
// the same relay pass again with RESULTS_DATABASE_URL (a private PostgreSQL), timed until the outbox is
// drained into it. BENCH_TRACE_PAIRS=n adds n pairs of relay passes without and with tracing, every
// invoice sampled, exported over OTLP/HTTP to a receiver in another process on loopback.
import { randomUUID } from "node:crypto";
import { cpus } from "node:os";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { loadConfig, requireSubmitConfig, type SubmitConfig } from "../src/config/load.js";
import { RedisServer } from "../src/dev/redis-server.js";
import { INGEST_CHUNK_ROWS, INGEST_CHUNKS_IN_FLIGHT } from "../src/ingest/ingest-file.js";
import { WorkWindow } from "../src/ingest/work-window.js";
import { invoiceJson } from "../src/invoice/key.js";
import { silentLogger } from "../src/log/logger.js";
import { createRedis } from "../src/queue/connection.js";
import { createInvoiceQueue, enqueueInvoices, invoiceJobOptions } from "../src/queue/invoice-queue.js";
import { INVOICE_JOB_NAME } from "../src/queue/job-data.js";
import { startSubmission, type SubmissionService } from "../src/queue/submission-service.js";
import { RedisLedger } from "../src/ledger/redis-ledger.js";
import { LedgerNames } from "../src/ledger/names.js";
import { startResultsExport, type ResultsExport } from "../src/cli/results-export.js";
import type { InvoiceTracing } from "../src/tracing/invoice-tracing.js";
import { startTracing } from "../src/tracing/start-tracing.js";
import { startBenchDatabase, type BenchDatabase } from "./results-database.js";
import {
  cpuMeter,
  describeCpu,
  hostSpeed,
  keyedInvoices,
  percentile,
  resetPrivateRedis,
  round,
  startOtlpSinkProcess,
  startSimProcess,
  within,
  type Run,
} from "./support.js";

const N = Number(process.env["BENCH_INVOICES"] ?? 20_000);
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 64);
// JIT, heap, connection pools and Redis scripts warmed for every contender alike, so that the first
// one measured does not pay for the process starting up. A pass as large as the measured one: after
// 2,000 the first measured relay pass still took 8-24% more CPU in this process than the next one.
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? N);
/**
 * Relay passes without and with PostgreSQL, in pairs (the order alternating): one pass of each varied by
 * up to a quarter between runs on this machine, so the comparison takes the median of the pairs' ratios.
 */
const PG_PAIRS = Math.max(1, Number(process.env["BENCH_PG_PAIRS"] ?? 3));
/** Relay passes without and with tracing, in pairs (the order alternating), compared as the PostgreSQL ones. */
const TRACE_PAIRS = Math.max(0, Number(process.env["BENCH_TRACE_PAIRS"] ?? 0));
const API_KEY = "irs_live_bench_key_000000";
// rows per registerRows/addBulk call, and chunks under way at once, as ingest does
const CHUNK = INGEST_CHUNK_ROWS;

const privateRedis =
  process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
const redisUrl = process.env["REDIS_URL"] ?? privateRedis?.url ?? "";
const sim = await startSimProcess(API_KEY);
const admin: Redis = createRedis(redisUrl, "producer", "bench-admin");
const meter = () => cpuMeter(sim.child.pid, privateRedis?.pid);
/**
 * The private Redis is emptied before each measured pass, so the queues use the default
 * QUEUE_PREFIX as a deployment would (key length is Redis and AOF work); a shared REDIS_URL gets
 * a prefix of its own per pass. Idempotency keys always come from a fresh namespace, so the
 * simulator never answers from its replay store.
 */
const prefixFor = (): string => (privateRedis === undefined ? `bench-${randomUUID()}` : "invoice-relay");

function relayConfig(prefix: string, databaseUrl?: string): SubmitConfig {
  return requireSubmitConfig(
    loadConfig({
      REDIS_URL: redisUrl,
      INVOICE_API_URL: sim.url,
      INVOICE_API_KEY: API_KEY,
      QUEUE_PREFIX: prefix,
      SUBMIT_CONCURRENCY: String(CONCURRENCY),
      LOG_LEVEL: "silent",
      ...submitSettingsFromEnv(),
      ...(databaseUrl === undefined ? {} : { RESULTS_DATABASE_URL: databaseUrl }),
    }),
  );
}

/** SUBMIT_RATE_* from this process's environment reach the relay passes (to measure the rate settings). */
function submitSettingsFromEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith("SUBMIT_RATE_") && entry[1] !== undefined,
    ),
  );
}

/** The PostgreSQL of the relay-with-PostgreSQL pass; none (and that pass skipped) without its binaries. */
const database: BenchDatabase | { readonly missing: string } = await startBenchDatabase().catch(
  (error: unknown) => ({ missing: error instanceof Error ? error.message : String(error) }),
);

/**
 * The learned rate as the last relay pass left it. A deployment keeps it in Redis from one night to the
 * next; each pass empties Redis, so a pass puts it back first, and runs as a later night of the same
 * deployment. The first night, with nothing learned, is measured on its own.
 */
let learned: { readonly state: string; readonly version: string } | undefined;
const DAY_MS = 86_400_000;

/**
 * 1. invoice-relay: rows registered and enqueued in chunks while the worker drains, timed from the
 * first row to the last final answer; latency is enqueue → final. `prefilled` registers and enqueues
 * everything first and times the worker alone (from its start), to set beside the no-op drain. With
 * `db`, the process exports to it as `run` does (the outbox on before the first row) and the pass is
 * timed until the outbox holds no event from before its last final answer.
 */
async function relay(
  n: number,
  prefilled: boolean,
  db?: BenchDatabase,
  night: "later" | "first" = "later",
  tracing?: InvoiceTracing,
): Promise<Run & { finalSeconds: number }> {
  const prefix = prefixFor();
  const config = relayConfig(prefix, db?.url);
  await db?.clear();
  const exported: ResultsExport | undefined = await startResultsExport(config, silentLogger());
  const docs = keyedInvoices(randomUUID(), n);
  const producer = createRedis(redisUrl, "producer", "bench-producer");
  const budgetKey = new LedgerNames(prefix).sendBudget;
  // a night's pause since (when the budget last booked a request): the next night resumes from it
  if (night === "later" && learned !== undefined)
    await producer.hset(budgetKey, "state", learned.state, "v", learned.version, "seen", Date.now() - DAY_MS);
  const store = new RedisLedger(producer, prefix);
  const queue = createInvoiceQueue(producer, prefix, config.maxAttempts);
  const enqueuedAt = new Map<string, number>();
  const latencies: number[] = [];
  let finals = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  const start = () =>
    startSubmission(config, silentLogger(), {
      tracing,
      onOutcome: (key, outcome) => {
        if (outcome.kind !== "succeeded" && outcome.kind !== "failed" && outcome.kind !== "skipped") return;
        latencies.push(performance.now() - (enqueuedAt.get(key) ?? 0));
        if (++finals === n) resolveDone();
      },
    });
  const enqueueChunk = async (i: number) => {
    const rows = docs.slice(i, i + CHUNK).map((d, j) => ({ line: i + j + 2, ...d }));
    await store.registerRows(
      "bench",
      rows.map((r) => ({ line: r.line, key: r.key, externalId: r.invoice.external_id })),
    );
    const at = performance.now();
    for (const r of rows) enqueuedAt.set(r.key, at);
    await enqueueInvoices(
      queue,
      rows.map((r) => ({ key: r.key, data: { invoice: r.invoice, batch: "bench", line: r.line } })),
      tracing,
    );
  };
  const enqueue = async () => {
    const chunks = new WorkWindow(INGEST_CHUNKS_IN_FLIGHT);
    for (let i = 0; i < n; i += CHUNK) await chunks.start(() => enqueueChunk(i));
    await chunks.settle();
  };
  let service: SubmissionService | undefined;
  try {
    if (prefilled) await enqueue();
    else service = await start();
    const cpu = meter();
    const began = performance.now();
    if (prefilled) service = await start();
    else await enqueue();
    await within(done, "relay");
    const finalSeconds = (performance.now() - began) / 1000;
    if (exported !== undefined) {
      const cutoff = await exported.redisNow();
      if (!(await within(exported.waitExported(cutoff, {}), "relay's export to PostgreSQL")))
        throw new Error("relay: the outbox was not drained");
    }
    const seconds = (performance.now() - began) / 1000;
    const used = cpu();
    const [state, version] = await producer.hmget(budgetKey, "state", "v");
    if (typeof state === "string" && typeof version === "string") learned = { state, version };
    const counts = await store.counts();
    if (counts.succeeded !== n)
      throw new Error(`relay: expected ${n} succeeded, got ${JSON.stringify(counts)}`);
    return { seconds, cpu: used, latencies: latencies.sort((a, b) => a - b), finalSeconds };
  } finally {
    await service?.close(5000);
    await exported?.close();
    await queue.close();
    await producer.quit();
  }
}

/**
 * 2. A bare BullMQ worker with a no-op processor: same Redis, payloads, job options and concurrency as
 * the relay. `prefilled` false times it like the relay (jobs added while the worker runs); true times
 * only the drain of a full queue, BullMQ's best case.
 */
async function noop(n: number, prefilled: boolean): Promise<Run> {
  const prefix = prefixFor();
  const docs = keyedInvoices(randomUUID(), n);
  const producer = createRedis(redisUrl, "producer", "bench-producer");
  const connection = createRedis(redisUrl, "worker", "bench-noop-worker");
  const queue = new Queue("noop", {
    connection: producer,
    prefix,
    defaultJobOptions: invoiceJobOptions(relayConfig(prefix).maxAttempts),
  });
  const worker = new Worker("noop", () => Promise.resolve(), {
    connection,
    prefix,
    concurrency: CONCURRENCY,
    autorun: false,
  });
  let completed = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolveDone = r));
  worker.on("completed", () => {
    if (++completed === n) resolveDone();
  });
  const enqueue = async () => {
    for (let i = 0; i < n; i += CHUNK) {
      const chunk = docs.slice(i, i + CHUNK);
      await queue.addBulk(
        chunk.map((d, j) => ({
          name: INVOICE_JOB_NAME,
          data: { invoice: d.invoice, batch: "bench", line: i + j + 2 },
          opts: { jobId: d.key },
        })),
      );
    }
  };
  let running: Promise<void> | undefined;
  try {
    await worker.waitUntilReady();
    if (prefilled) await enqueue();
    const cpu = meter();
    const began = performance.now();
    running = worker.run();
    if (!prefilled) await enqueue();
    await within(done, "no-op worker");
    return { seconds: (performance.now() - began) / 1000, cpu: cpu(), latencies: [] };
  } finally {
    await worker.close();
    await running;
    await queue.close();
    await connection.quit();
    await producer.quit();
  }
}

/** 3. What a user would write instead: fetch with a concurrency limit, no queue, no store. */
async function fetchLoop(n: number): Promise<Run> {
  const docs = keyedInvoices(randomUUID(), n);
  let next = 0;
  const cpu = meter();
  const began = performance.now();
  const loop = Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < docs.length) {
        const d = docs[next++];
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
  await within(loop, "fetch loop");
  return { seconds: (performance.now() - began) / 1000, cpu: cpu(), latencies: [] };
}

/**
 * 4. The relay pass with tracing on as an operator turns it on (the OTEL_* variables; OTLP/HTTP protobuf,
 * the default), every invoice sampled, exporting to `sinkUrl`; the spans still queued when the last
 * answer is in are exported after the pass is timed.
 */
async function tracedRelay(n: number, sinkUrl: string): Promise<Run> {
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: "always_on" };
  // The exporter and the sampler read the process's environment.
  Object.assign(process.env, env);
  const traced = await startTracing(process.env, { queue: "invoices", logger: silentLogger() });
  if (traced === undefined) throw new Error("tracing did not start");
  try {
    return await relay(n, false, undefined, "later", traced.tracing);
  } finally {
    await traced.shutdown();
    for (const name of Object.keys(env)) Reflect.deleteProperty(process.env, name);
  }
}

/** Each measured pass starts on an empty private Redis (see resetPrivateRedis). */
async function measured<T extends Run>(run: () => Promise<T>): Promise<T> {
  if (privateRedis !== undefined) await resetPrivateRedis(admin);
  return run();
}

try {
  const speed = hostSpeed();
  const db = "missing" in database ? undefined : database;
  const sink = TRACE_PAIRS > 0 ? await startOtlpSinkProcess() : undefined;
  if (WARMUP > 0) {
    await relay(WARMUP, false);
    if (sink !== undefined) await tracedRelay(WARMUP, sink.url);
    if (db !== undefined) await relay(WARMUP, false, db);
    await noop(WARMUP, false);
    await fetchLoop(WARMUP);
  }
  const r = await measured(() => relay(N, false));
  const rp = db === undefined ? undefined : await measured(() => relay(N, false, db));
  const pgRows = db === undefined ? undefined : await db.rowsWritten();
  const pairs = rp === undefined ? [] : [{ r, rp }];
  for (let i = 1; db !== undefined && i < PG_PAIRS; i++) {
    const withPg = () => measured(() => relay(N, false, db));
    const without = () => measured(() => relay(N, false));
    if (i % 2 === 1) {
      const later = await withPg();
      pairs.push({ rp: later, r: await without() });
    } else {
      const first = await without();
      pairs.push({ r: first, rp: await withPg() });
    }
  }
  const tracePairs: { r: Run; rt: Run }[] = [];
  for (let i = 0; sink !== undefined && i < TRACE_PAIRS; i++) {
    const on = () => measured(() => tracedRelay(N, sink.url));
    const off = () => measured(() => relay(N, false));
    if (i % 2 === 0) {
      const rt = await on();
      tracePairs.push({ rt, r: await off() });
    } else {
      const r = await off();
      tracePairs.push({ r, rt: await on() });
    }
  }
  const sinkStats = sink === undefined ? undefined : await (await fetch(`${sink.url}/stats`)).text();
  await sink?.stop();
  const q = await measured(() => noop(N, false));
  const f = await measured(() => fetchLoop(N));
  const rd = await measured(() => relay(N, true));
  const rf = await measured(() => relay(N, false, undefined, "first"));
  const qd = await measured(() => noop(N, true));

  const rate = (run: Run) => N / run.seconds;
  const ratio = (a: Run, b: Run) => (rate(a) / rate(b)).toFixed(2);
  const median = (values: readonly number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  const p50 = round(percentile(r.latencies, 50));
  const p99 = round(percentile(r.latencies, 99));
  const line = (label: string, run: Run) => {
    console.log(`${label.padEnd(64)} ${round(rate(run))}/s (${run.seconds.toFixed(2)} s)`);
    console.log(`    ${describeCpu(run.cpu, run.seconds)}`);
  };
  const redisText = privateRedis === undefined ? redisUrl : "private redis-server 127.0.0.1";
  console.log(
    `machine: ${cpus().length} cores; single-core speed ${round(speed)}k JSON round trips/s (it varies by the hour)`,
  );
  console.log(`invoices: ${N} per pass after a warm-up of ${WARMUP}; concurrency ${CONCURRENCY} everywhere`);
  console.log(
    `Redis: ${redisText}, appendonly yes, appendfsync everysec; emptied before each pass if private`,
  );
  console.log(
    `jobs: id = idempotency key, relay job options (removeOnComplete), addBulk chunks of ${CHUNK} (as ingest)`,
  );
  console.log("fetch loop: Node's global fetch (keep-alive), no queue, no results store");
  line("invoice-relay: register + enqueue + worker + results store", r);
  if (rp === undefined)
    console.log(
      `${"  the same with RESULTS_DATABASE_URL (PostgreSQL)".padEnd(64)} skipped: ${"missing" in database ? database.missing : ""}`,
    );
  else {
    line("  the same with RESULTS_DATABASE_URL, until exported to PostgreSQL", rp);
    console.log(
      `    PostgreSQL: private, fsync and synchronous_commit on; ${((pgRows ?? 0) / N).toFixed(2)} rows per invoice ` +
        `(results + attempts + batch_rows + batches; this pass writes no batch reports); relay with PostgreSQL / relay = ${ratio(rp, r)}`,
    );
    console.log(
      `    every invoice final after ${rp.finalSeconds.toFixed(2)} s (${round(N / rp.finalSeconds)}/s), the outbox drained ${(rp.seconds - rp.finalSeconds).toFixed(2)} s later`,
    );
    for (const [i, pair] of pairs.entries())
      console.log(
        `    pair ${i + 1}: relay ${round(rate(pair.r))}/s, with PostgreSQL ${round(rate(pair.rp))}/s (${ratio(pair.rp, pair.r)}×; ` +
          `final after ${pair.rp.finalSeconds.toFixed(2)} s, drained ${(pair.rp.seconds - pair.rp.finalSeconds).toFixed(2)} s later)`,
      );
    console.log(
      `    median of ${pairs.length} pair(s): relay with PostgreSQL / relay = ${median(pairs.map((p) => rate(p.rp) / rate(p.r))).toFixed(2)}`,
    );
  }
  if (tracePairs.length > 0) {
    const cpuPer = (run: Run) => ((run.cpu.bench / N) * 1e6).toFixed(0);
    for (const [i, pair] of tracePairs.entries())
      console.log(
        `tracing pair ${i + 1}: off ${round(rate(pair.r))}/s, on ${round(rate(pair.rt))}/s (${ratio(pair.rt, pair.r)}×); ` +
          `relay process CPU per invoice ${cpuPer(pair.r)} µs off, ${cpuPer(pair.rt)} µs on`,
      );
    console.log(
      `    median of ${tracePairs.length} pair(s): relay with tracing, every invoice sampled / relay = ` +
        `${median(tracePairs.map((p) => rate(p.rt) / rate(p.r))).toFixed(2)}; OTLP receiver got ${sinkStats ?? ""}`,
    );
    console.log(
      JSON.stringify({
        trace_off_per_s: round(median(tracePairs.map((p) => rate(p.r)))),
        trace_on_per_s: round(median(tracePairs.map((p) => rate(p.rt)))),
        trace_ratio_median: Number(median(tracePairs.map((p) => rate(p.rt) / rate(p.r))).toFixed(2)),
      }),
    );
  }
  line("bare BullMQ worker, no-op processor, jobs added as it runs", q);
  line("concurrency-limited fetch loop", f);
  line("(drain only) invoice-relay worker, queue prefilled", rd);
  line("(drain only) bare BullMQ no-op worker, queue prefilled", qd);
  line("(first night) invoice-relay, no learned rate yet", rf);
  console.log(
    `relay / no-op = ${ratio(r, q)}; drain only: ${ratio(rd, qd)}; relay / fetch loop = ${ratio(r, f)} ` +
      `(first night ${ratio(rf, f)})`,
  );
  console.log(`enqueue → final latency: p50 ${p50} ms, p99 ${p99} ms`);
  console.log(
    JSON.stringify({
      relay_per_s: round(rate(r)),
      bullmq_noop_per_s: round(rate(q)),
      fetch_loop_per_s: round(rate(f)),
      first_night_per_s: round(rate(rf)),
      p50_ms: p50,
      p99_ms: p99,
    }),
  );
  console.log(
    JSON.stringify({
      relay_per_s: round(median(pairs.length === 0 ? [rate(r)] : pairs.map((p) => rate(p.r)))),
      relay_pg_per_s: rp === undefined ? null : round(median(pairs.map((p) => rate(p.rp)))),
      pg_rows_per_invoice: pgRows === undefined ? null : Number((pgRows / N).toFixed(2)),
      pg_pairs: pairs.length,
      pg_ratio_median:
        pairs.length === 0 ? null : Number(median(pairs.map((p) => rate(p.rp) / rate(p.r))).toFixed(2)),
    }),
  );
} finally {
  await admin.quit();
  await sim.stop();
  await privateRedis?.dispose();
  if (!("missing" in database)) await database.close();
}
