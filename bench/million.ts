// npm run bench:million — one `invoice-relay run` of BENCH_INVOICES (1,000,000) valid invoices from one
// CSV drop file, against the simulator in a process of its own (no limit, no faults, no latency), on a
// private redis-server with AOF: the wall time, invoices/s, the run's peak RSS and Redis's peak
// used_memory, the figures of "Redis bounded whatever the file's size". INGEST_WINDOW and SUBMIT_*
// from this process's environment reach the run.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../src/dev/redis-server.js";
import { createRedis } from "../src/queue/connection.js";
import { describeExit, spawnEntry } from "./chaos/processes.js";
import { writeCsv } from "./generate.js";
import { cpuMeter, describeCpu, hostSpeed, resetPrivateRedis, startSimProcess } from "./support.js";

const N = Number(process.env["BENCH_INVOICES"] ?? 1_000_000);
const TIMEOUT_MS = Number(process.env["BENCH_TIMEOUT_S"] ?? 3600) * 1000;
/** Often enough to see Redis's and the run's memory between two of its chunks of work. */
const SAMPLE_MS = 200;
const API_KEY = "irs_live_bench_key_000000";
const mb = (bytes: number) => Math.round(bytes / 1e6);
const loads = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** A process's peak resident set so far (VmHWM), in bytes; 0 once it is gone. */
function peakRss(pid: number | undefined): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid ?? 0}/status`, "utf8"));
    return Number(match?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

function usedMemory(info: string, field: "used_memory" | "used_memory_peak"): number {
  return Number(new RegExp(`^${field}:(\\d+)`, "m").exec(info)?.[1] ?? 0);
}

const passedOn = Object.fromEntries(
  Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      (entry[0] === "INGEST_WINDOW" || entry[0].startsWith("SUBMIT_")) && entry[1] !== undefined,
  ),
);

const redis = await RedisServer.start({ aof: true });
const sim = await startSimProcess(API_KEY);
const admin = createRedis(redis.url, "producer", "bench-million");
const dropDir = await mkdtemp(join(tmpdir(), "invoice-relay-million-"));
try {
  await writeCsv(join(dropDir, "invoices.csv"), N);
  const speed = hostSpeed();
  await resetPrivateRedis(admin);
  await admin.config("RESETSTAT"); // used_memory_peak from here
  const loadBefore = loads();
  const meter = cpuMeter(sim.child.pid, redis.pid);
  const began = performance.now();
  const run = spawnEntry("run", "workers/cli.js", ["run"], {
    REDIS_URL: redis.url,
    INVOICE_API_URL: sim.url,
    INVOICE_API_KEY: API_KEY,
    DROP_DIR: dropDir,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    ...passedOn,
  });
  let rss = 0;
  let redisSampled = 0;
  const sampler = setInterval(() => {
    rss = Math.max(rss, peakRss(run.child.pid));
    admin.info("memory").then(
      (info) => (redisSampled = Math.max(redisSampled, usedMemory(info, "used_memory"))),
      () => undefined,
    );
  }, SAMPLE_MS);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), TIMEOUT_MS);
  const exit = await run.exited.finally(() => {
    clearTimeout(timer);
    clearInterval(sampler);
  });
  const seconds = (performance.now() - began) / 1000;
  const cpu = meter();
  if (exit.code !== 0)
    throw new Error(
      `invoice-relay run ended with ${describeExit(exit)} after ${seconds.toFixed(0)} s:\n${run.tail()}`,
    );
  const info = await admin.info("memory");
  const redisPeak = Math.max(redisSampled, usedMemory(info, "used_memory_peak"));
  const window = passedOn["INGEST_WINDOW"] ?? "default";
  console.log(
    `${N} invoices, one CSV: invoice-relay run exit 0 in ${seconds.toFixed(1)} s = ${Math.round(N / seconds)} invoices/s; ` +
      `INGEST_WINDOW ${window}; machine-speed reference ${speed.toFixed(0)}`,
  );
  console.log(
    `peak RSS of the run ${mb(rss)} MB; Redis peak used_memory ${mb(redisPeak)} MB ` +
      `(${mb(usedMemory(info, "used_memory"))} MB at the end: the finished records)`,
  );
  console.log(describeCpu(cpu, seconds));
  console.log(`load average (1, 5, 15 min): before ${loadBefore}, after ${loads()}`);
  console.log(
    JSON.stringify({
      invoices: N,
      seconds: Math.round(seconds * 10) / 10,
      invoices_per_s: Math.round(N / seconds),
      peak_rss_mb: mb(rss),
      redis_peak_mb: mb(redisPeak),
      redis_end_mb: mb(usedMemory(info, "used_memory")),
    }),
  );
} finally {
  await admin.quit();
  await sim.stop();
  await redis.dispose();
  await rm(dropDir, { recursive: true, force: true });
}
