// npm run test:chaos — the chaos suite: invoices across drop files, submitted through a faulty simulator
// by worker processes that are killed with SIGKILL and restarted, a private Redis (AOF everysec)
// restarted mid-run and an ingest killed mid-file; then every guarantee of docs/reliability.md is checked,
// and an operator phase follows (an outage night, corrected invoices dropped, `retry`: one effect per external_id),
// then an export phase (the results of record in a private PostgreSQL while exporting processes are killed).
// Size and seed: CHAOS_INVOICES (10000), CHAOS_FILES (5), CHAOS_WORKERS (2), CHAOS_WORKER_KILLS (3),
// CHAOS_SEED (random, printed), CHAOS_TIMEOUT_S (900), CHAOS_REDIS_RESTART (term | kill | power),
// CHAOS_CAPACITY (requests/s the simulator admits, 300 unless told, 0: no limit; bench/chaos/capacity-fault.ts), CHAOS_KEEP=1
// keeps the folders.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../src/dev/redis-server.js";
import { createRedis } from "../src/queue/connection.js";
import { RedisLedger } from "../src/ledger/redis-ledger.js";
import { startSimulator } from "../src/simulator/index.js";
import { AofTail } from "./chaos/aof-tail.js";
import { writeDropFiles } from "./chaos/drop-files.js";
import { WorkerSlot } from "./chaos/fleet.js";
import { ingestKilledMidFile } from "./chaos/ingest-phase.js";
import { chaosLoop, type LoopFigures } from "./chaos/loop.js";
import { chaosOptions, FAULTS } from "./chaos/options.js";
import { capacityFault } from "./chaos/capacity-fault.js";
import { exportPhase } from "./chaos/export-phase.js";
import { operatorPhase } from "./chaos/operator-phase.js";
import { chaosPlan } from "./chaos/plan.js";
import { describeExit, killAllSpawned, spawnEntry } from "./chaos/processes.js";
import { verify } from "./chaos/verify.js";

const API_KEY = "irs_live_chaos_key_0123456789";
const log = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (ms: number) => Math.round(ms / 100) / 10;

const options = chaosOptions(process.env);
const plan = chaosPlan(
  options.seed,
  options.invoices,
  options.files,
  options.workers,
  options.killsPerWorker,
);
// The service's capacity (CHAOS_CAPACITY; null: no limit).
const { capacity } = capacityFault(process.env);
const started = Date.now();
const deadline = started + options.timeoutMs;
log(
  `chaos: seed ${options.seed}; ${options.invoices} invoices in ${options.files} files; ` +
    `${options.workers} workers killed ${options.killsPerWorker} times each; faults ${JSON.stringify(FAULTS)}; ` +
    `capacity ${JSON.stringify(capacity)}`,
);
log(
  `plan: worker kills at ${plan.workerKills.map((k) => `${k.atEffects} (w${k.worker + 1})`).join(", ")} effects; ` +
    `ingest killed in file ${plan.ingestKillFile + 1}; Redis down (${options.redisRestart}) at ${plan.redisRestartAtEffects} effects, down ${plan.redisDownMs} ms`,
);

const redis = await RedisServer.start({ aof: true });
const sim = await startSimulator({
  apiKey: API_KEY,
  seed: options.seed,
  ...FAULTS,
  capacity,
});
// The chaos process keeps its own effect count per key from the simulator's attempt events.
const effects = new Map<string, number>();
let effectCount = 0;
sim.events.on("attempt", (attempt) => {
  if (attempt.outcome !== "effect" || attempt.idempotencyKey === undefined) return;
  effects.set(attempt.idempotencyKey, (effects.get(attempt.idempotencyKey) ?? 0) + 1);
  effectCount++;
});
// Ctrl-C or a CI timeout: no worker, run or Redis of this chaos run may outlive it.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAllSpawned();
    void redis.kill().finally(() => process.exit(130));
  });
}
const dropDir = await mkdtemp(join(tmpdir(), "invoice-relay-chaos-"));
const files = await writeDropFiles(dropDir, options.invoices, options.files);
const prefix = `chaos-${options.seed}`;
const monitor = createRedis(redis.url, "worker", "chaos-monitor"); // rides out the Redis restart
monitor.on("error", () => undefined);
const store = new RedisLedger(monitor, prefix);

const common = {
  REDIS_URL: redis.url,
  QUEUE_PREFIX: prefix,
  // 30 % of attempts fail; 25 attempts all failing is a chance of 0.3^25, about 1e-13. Ingest needs it
  // too: a job keeps the attempts of the process that enqueued it.
  MAX_ATTEMPTS: "25",
};
const submitEnv = {
  ...common,
  INVOICE_API_URL: sim.url,
  INVOICE_API_KEY: API_KEY,
  LOCK_DURATION_MS: "2000",
  BACKOFF_BASE_MS: "50",
  BACKOFF_CAP_MS: "2000",
  SHUTDOWN_GRACE_MS: "10000",
};
const dropEnv = { DROP_DIR: dropDir, SETTLE_MS: "0" };

const failures: string[] = [];
const workers = Array.from(
  { length: options.workers },
  (_, i) => new WorkerSlot(i, { ...submitEnv, LOG_LEVEL: "info" }),
);
let ingestDone = false;
let ingestKills = 0;

let loop: Promise<LoopFigures> | undefined;
let loopFigures: LoopFigures | undefined;
try {
  const ingest = ingestKilledMidFile(
    { ...common, ...dropEnv, LOG_LEVEL: "warn" },
    monitor,
    prefix,
    dropDir,
    files[plan.ingestKillFile]?.name ?? "",
  ).finally(() => (ingestDone = true));
  // The final run starts once ingest is over and waits for every batch through the remaining chaos.
  const run = ingest.then(() =>
    spawnEntry("run", "workers/cli.js", ["run", "--deadline", `${options.timeoutMs / 1000}s`], {
      ...submitEnv,
      ...dropEnv,
      LOG_LEVEL: "warn",
    }),
  );
  const runExited = run.then((r) => r.exited);
  loop = chaosLoop({
    plan,
    workers,
    redis,
    redisRestart: options.redisRestart,
    aof: new AofTail(redis.dir),
    succeeded: async () => (await store.counts()).succeeded,
    effects: () => effectCount,
    ingestDone: () => ingestDone,
    finished: runExited.catch(() => undefined),
    deadline,
    log,
  });
  const figures = await ingest;
  ingestKills = 1;
  log(
    `ingest: killed with SIGKILL inside ${figures.killedFile} (batch ${figures.killedBatch}, ` +
      `${figures.registeredAtKill} rows registered); run again: exit 0, ` +
      `${figures.resumedSameBatch ? "resumed the same batch" : "DID NOT resume the same batch"}\n` +
      figures.secondOutput.replace(/^/gm, "  "),
  );
  if (!figures.resumedSameBatch)
    failures.push(`the ingest re-run did not resume batch ${figures.killedBatch}`);
  loopFigures = await loop;
  const spawnedRun = await run;
  if (spawnedRun.running()) {
    failures.push(`run did not finish within ${options.timeoutMs / 1000} s`);
    await spawnedRun.stop("SIGKILL");
  }
  const exit = await spawnedRun.exited;
  const runExit = describeExit(exit);
  log(`run: ${runExit} after ${seconds(Date.now() - started)} s\n${spawnedRun.stdout().trimEnd()}`);
  if (exit.code !== 0) failures.push(`run ended with ${runExit}, expected exit 0:\n${spawnedRun.tail()}`);
  failures.push(...loopFigures.missed.map((m) => `planned fault never struck: ${m}`));
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  loopFigures ??= await loop?.catch(() => undefined);
  for (const slot of workers) {
    const problem = await slot.stop();
    if (problem !== undefined) failures.push(problem);
    failures.push(...slot.unexpected);
  }
}

const stats = sim.stats();
const verdict = await verify({ dropDir, files, redis: monitor, prefix, stats, effects });
failures.push(...verdict.failures);
// The operator's night after the chaos: an outage fails a file, corrections of half of it are dropped,
// retry re-drives the rest; one effect per external_id throughout.
let operator: "passed" | "failed" | "skipped" = "skipped";
if (failures.length === 0) {
  const found = await operatorPhase({
    sim,
    dropDir,
    env: { ...submitEnv, ...dropEnv, LOG_LEVEL: "warn" },
    faults: FAULTS,
    effects,
    log,
  });
  failures.push(...found);
  operator = found.length === 0 ? "passed" : "failed";
}
// Three nights with the results of record while the processes that export are killed mid-export;
// PostgreSQL must then equal the reports on disk, row for row.
let exported: "passed" | "failed" | "skipped" = "skipped";
let exporterKills = 0;
if (failures.length === 0) {
  const found = await exportPhase({
    sim,
    redis: monitor,
    env: { ...submitEnv, SETTLE_MS: "0", LOG_LEVEL: "warn" },
    prefix: `${prefix}-export`,
    seed: options.seed,
    faults: FAULTS,
    effects,
    effectTotal: () => effectCount,
    log,
  });
  failures.push(...found.failures);
  exporterKills = found.kills;
  exported = found.failures.length === 0 ? "passed" : "failed";
}
const wall = seconds(Date.now() - started);
const kills = (loopFigures?.workerKills ?? 0) + ingestKills;
log(
  `simulator: ${stats.requests.total} requests, answered ${JSON.stringify(stats.requests.byStatus)}; ` +
    `faults ${JSON.stringify(stats.faults)}; ${stats.replays} replays, ${stats.inFlightConflicts} in-flight 409s`,
);
log(
  `effects: ${stats.effects.total} over ${stats.effects.distinctKeys} keys, ${stats.effects.keysWithMultipleEffects} repeated; ` +
    `kills: ${workers.map((w) => `worker ${w.index + 1} ×${w.kills}`).join(", ")}, ingest ×${ingestKills}; ` +
    `Redis restarts: ${loopFigures?.redisRestarts ?? 0} (${options.redisRestart}, answering after ` +
    `${loopFigures?.redisRestartMs ?? "-"} ms, ${loopFigures?.aofBytesLost ?? 0} AOF bytes lost)`,
);
log(
  failures.length === 0
    ? "checks: all passed"
    : `checks: ${failures.length} FAILED\n- ${failures.join("\n- ")}`,
);
log(
  JSON.stringify({
    invoices: options.invoices,
    kills,
    redis_restarts: loopFigures?.redisRestarts ?? 0,
    faults: stats.faults,
    duplicates: verdict.duplicates,
    lost: verdict.lost,
    operator_phase: operator,
    export_phase: exported,
    exporter_kills: exporterKills,
    wall_s: wall,
  }),
);

monitor.disconnect();
await sim.close();
if (failures.length === 0 && !options.keep) {
  await redis.dispose();
  await rm(dropDir, { recursive: true, force: true });
} else {
  await redis.stop();
  log(`kept for inspection: drop folder ${dropDir}, Redis folder ${redis.dir} (seed ${options.seed})`);
}
process.exitCode = failures.length === 0 ? 0 : 1;
