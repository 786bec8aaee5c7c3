// npm run bench:files — one `invoice-relay run` of BENCH_FILES (10,000) drop files of one invoice each,
// as an ERP that exports one file per invoice leaves them, against the simulator in a process of its own
// (no limit, no faults, no latency), on a private redis-server with AOF unless REDIS_URL is set: the wall
// time and files/s, and the checks that every file has its report and was archived and that the service
// saw every invoice exactly once (its effect counts).
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../src/dev/redis-server.js";
import { createRedis } from "../src/queue/connection.js";
import { simulatorStatsSchema } from "../src/simulator/index.js";
import { describeExit, spawnEntry } from "./chaos/processes.js";
import { writeCsv } from "./generate.js";
import { cpuMeter, describeCpu, hostSpeed, resetPrivateRedis, startSimProcess } from "./support.js";

const N = Number(process.env["BENCH_FILES"] ?? 10_000);
const TIMEOUT_MS = Number(process.env["BENCH_TIMEOUT_S"] ?? 1800) * 1000;
const API_KEY = "irs_live_bench_key_000000";
/** Files written at once: enough to keep the disk busy, few enough to stay far below the open-file limit. */
const WRITES_IN_FLIGHT = 64;
const loads = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

const passedOn = Object.fromEntries(
  Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      (entry[0] === "INGEST_WINDOW" || entry[0].startsWith("SUBMIT_")) && entry[1] !== undefined,
  ),
);

/** `n` CSV files of one invoice each, one external id per file; written oldest first, as an ERP exports. */
async function writeFiles(dir: string, n: number): Promise<void> {
  const base = Date.now() / 1000 - n;
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < n; i = next++) {
      const path = join(dir, `invoice-${String(i).padStart(6, "0")}.csv`);
      await writeCsv(path, 1, i);
      await utimes(path, base + i, base + i);
    }
  };
  await Promise.all(Array.from({ length: WRITES_IN_FLIGHT }, writer));
}

async function count(dir: string, suffix: string): Promise<number> {
  return (await readdir(dir)).filter((name) => name.endsWith(suffix)).length;
}

const privateRedis =
  process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
const redisUrl = process.env["REDIS_URL"] ?? privateRedis?.url ?? "";
const sim = await startSimProcess(API_KEY);
const admin = createRedis(redisUrl, "producer", "bench-files");
const dropDir = await mkdtemp(join(tmpdir(), "invoice-relay-files-"));
try {
  // A prefix of its own, so that a shared REDIS_URL holds nothing this run would see as its own.
  const prefix = `bench-files-${randomUUID()}`;
  await mkdir(dropDir, { recursive: true });
  await writeFiles(dropDir, N);
  const speed = hostSpeed();
  if (privateRedis !== undefined) await resetPrivateRedis(admin);
  const loadBefore = loads();
  const meter = cpuMeter(sim.child.pid, privateRedis?.pid);
  const began = performance.now();
  const run = spawnEntry("run", "workers/cli.js", ["run"], {
    REDIS_URL: redisUrl,
    INVOICE_API_URL: sim.url,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: prefix,
    DROP_DIR: dropDir,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    ...passedOn,
  });
  // What the run says on stderr (its summary table, on stdout, would crowd it out of `tail()`).
  let said = "";
  run.child.stderr?.on("data", (data: Buffer) => {
    said = (said + data.toString()).slice(-16_000);
  });
  const timer = setTimeout(() => run.child.kill("SIGKILL"), TIMEOUT_MS);
  const exit = await run.exited.finally(() => {
    clearTimeout(timer);
  });
  const seconds = (performance.now() - began) / 1000;
  const cpu = meter();
  if (exit.code !== 0)
    throw new Error(
      `invoice-relay run ended with ${describeExit(exit)} after ${seconds.toFixed(0)} s:\n${said}`,
    );
  const stats = simulatorStatsSchema.parse(await (await fetch(`${sim.url}/__sim/stats`)).json());
  const reports = await count(join(dropDir, "reports"), ".results.csv");
  const summaries = await count(join(dropDir, "reports"), ".summary.json");
  const archived = await count(join(dropDir, "archive"), ".csv");
  const left = (await readdir(dropDir)).filter((name) => name.endsWith(".csv")).length;
  const problems = [
    reports === N && summaries === N
      ? ""
      : `${reports} results CSVs and ${summaries} summaries for ${N} files`,
    archived === N && left === 0 ? "" : `${archived} files archived, ${left} left in the drop folder`,
    stats.effects.total === N && stats.effects.distinctKeys === N
      ? ""
      : `the service saw ${stats.effects.total} effects of ${stats.effects.distinctKeys} keys for ${N} invoices`,
    stats.effects.keysWithMultipleEffects === 0
      ? ""
      : `${stats.effects.keysWithMultipleEffects} invoices sent more than once`,
  ].filter((p) => p !== "");
  if (problems.length > 0) throw new Error(`bench:files: ${problems.join("; ")}`);
  console.log(
    `${N} one-invoice CSV files: invoice-relay run exit 0 in ${seconds.toFixed(1)} s = ${(N / seconds).toFixed(0)} files/s; ` +
      `every file reported and archived, every invoice sent once (${stats.requests.total} requests); ` +
      `Redis ${privateRedis === undefined ? "from REDIS_URL" : "private, AOF everysec"}; machine-speed reference ${speed.toFixed(0)}`,
  );
  console.log(describeCpu(cpu, seconds));
  console.log(`load average (1, 5, 15 min): before ${loadBefore}, after ${loads()}`);
  console.log(
    JSON.stringify({
      files: N,
      seconds: Math.round(seconds * 10) / 10,
      files_per_s: Math.round(N / seconds),
      requests: stats.requests.total,
      reference: Math.round(speed),
    }),
  );
} finally {
  await admin.quit();
  await sim.stop();
  await privateRedis?.dispose();
  await rm(dropDir, { recursive: true, force: true });
}
