// npm run bench:capacity — a night against a service whose capacity the relay is not told: `run` and two
// `worker` processes, the simulator's capacity dropping to a third and coming back, then the same night
// with BullMQ's fixed limiter set to the true capacity (the anchor). Prints per phase the time against the
// ideal, the share of the capacity used, 429s per invoice and the seconds to settle after each change,
// and one JSON line. Size: BENCH_INVOICES (6000), BENCH_CAPACITY (300 requests/s), BENCH_PHASE_S (8).
// BENCH_FAULTS=chaos adds the chaos suite's faults on top of the capacity (20 % 503, 5 % 429 at random
// with Retry-After: 1, 5 % lost, 0-50 ms). BENCH_ANCHOR=0 leaves out the fixed limiter's night (when
// tuning the learned rate; its JSON line then has no static figures).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { RedisServer } from "../src/dev/redis-server.js";
import { LedgerNames } from "../src/ledger/names.js";
import { startSimulator, type SimulatorHandle } from "../src/simulator/index.js";
import { spawnEntry, killAllSpawned, describeExit } from "./chaos/processes.js";
import { FAULTS } from "./chaos/options.js";
import { writeCsv } from "./generate.js";
import { nightFigures, type Night } from "./capacity-figures.js";

const N = Number(process.env["BENCH_INVOICES"] ?? 6000);
const CAPACITY = Number(process.env["BENCH_CAPACITY"] ?? 300);
const PHASE_S = Number(process.env["BENCH_PHASE_S"] ?? 8);
const API_KEY = "irs_live_bench_key_000000";
const log = (line: string) => process.stdout.write(`${line}\n`);

const redis = await RedisServer.start();
const WITH_FAULTS = process.env["BENCH_FAULTS"] === "chaos";
const sim = await startSimulator({
  apiKey: API_KEY,
  latencyMs: { min: 20, max: 40 },
  ...(WITH_FAULTS ? FAULTS : {}),
  capacity: {
    ratePerSec: CAPACITY,
    burst: Math.max(1, Math.round(CAPACITY / 10)),
    maxInFlight: 256,
    latencyAtCapacityMs: 20,
  },
});
process.on("exit", killAllSpawned);

/** One night: `run` + 2 workers; the capacity drops to a third after PHASE_S and returns after 2·PHASE_S. */
async function night(label: string, relayEnv: Record<string, string>): Promise<Night> {
  sim.reset();
  const drop = await mkdtemp(join(tmpdir(), "bench-capacity-"));
  await writeCsv(join(drop, "night.csv"), N);
  const env = {
    REDIS_URL: redis.url,
    INVOICE_API_URL: sim.url,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: `bench-capacity-${label}-${Date.now()}`,
    DROP_DIR: drop,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    ...relayEnv,
  };
  const workers = [1, 2].map((i) =>
    spawnEntry(
      `${label} worker ${i}`,
      "workers/cli.js",
      ["worker"],
      { ...env, LOG_LEVEL: "info" },
      "submission worker started",
    ),
  );
  await Promise.all(workers.map((w) => w.ready));
  const run = spawnEntry(`${label} run`, "workers/cli.js", ["run", "--deadline", "600s"], env);
  const changes = scheduleChanges(sim);
  const states =
    process.env["BENCH_TRACE"] === "2" ? watchStates(env.QUEUE_PREFIX, changes.started) : undefined;
  const tenths: number[] = [];
  const countTenths = (attempt: { at: number }) => {
    void changes.started.then((t0) => {
      const i = Math.floor((attempt.at - t0) / 100);
      tenths[i] = (tenths[i] ?? 0) + 1;
    });
  };
  if (process.env["BENCH_TRACE"] === "3") sim.events.on("attempt", countTenths);
  const exit = await run.exited;
  states?.stop();
  sim.events.off("attempt", countTenths);
  if (process.env["BENCH_TRACE"] === "3")
    log(`requests per 100 ms: ${JSON.stringify(Array.from(tenths, (n) => n ?? 0))}`);
  const ended = Date.now();
  changes.cancel();
  await Promise.all(workers.map((w) => w.stop("SIGTERM")));
  await rm(drop, { recursive: true, force: true });
  if (exit.code !== 0) throw new Error(`${label}: run ${describeExit(exit)}:\n${run.tail()}`);
  const stats = sim.stats();
  if (process.env["BENCH_TRACE"] !== undefined)
    log(JSON.stringify(stats.capacity.perSecond.map((s) => [s.admitted, s.refused])));
  return {
    startedAt: await changes.started,
    endedAt: ended,
    capacity: CAPACITY,
    phaseMs: PHASE_S * 1000,
    invoices: N,
    perSecond: stats.capacity.perSecond,
    refused: stats.capacity.refused,
    effects: stats.effects.total,
  };
}

/** BENCH_TRACE=2: every state of the learned rate, as it is written, with the seconds from the first request. */
function watchStates(prefix: string, started: Promise<number>): { stop: () => void } {
  const client = new Redis(redis.url);
  const name = new LedgerNames(prefix).sendBudget;
  let last = "";
  const timer = setInterval(() => {
    void client.hget(name, "state").then(async (state) => {
      if (state === null || state === last) return;
      last = state;
      log(`${((Date.now() - (await started)) / 1000).toFixed(3)} ${state}`);
    });
  }, 10);
  return {
    stop: () => {
      clearInterval(timer);
      client.disconnect();
    },
  };
}

/** Starts the clock at the first request the simulator sees, then drops and restores the capacity. */
function scheduleChanges(s: SimulatorHandle): { started: Promise<number>; cancel: () => void } {
  const timers: NodeJS.Timeout[] = [];
  const started = new Promise<number>((resolve) => {
    s.events.once("attempt", (attempt) => {
      const t0 = attempt.at;
      timers.push(
        setTimeout(
          () => s.setCapacity({ ratePerSec: CAPACITY / 3, burst: Math.max(1, Math.round(CAPACITY / 30)) }),
          PHASE_S * 1000,
        ),
        setTimeout(
          () => s.setCapacity({ ratePerSec: CAPACITY, burst: Math.max(1, Math.round(CAPACITY / 10)) }),
          2 * PHASE_S * 1000,
        ),
      );
      resolve(t0);
    });
  });
  return {
    started,
    cancel: () => {
      timers.forEach(clearTimeout);
    },
  };
}

try {
  log(
    `bench:capacity: ${N} invoices, capacity ${CAPACITY}/s (a third from ${PHASE_S} s to ${2 * PHASE_S} s), run + 2 workers` +
      (WITH_FAULTS ? `; faults ${JSON.stringify(FAULTS)}` : ""),
  );
  const adaptive = nightFigures(await night("adaptive", {}));
  log(`learned rate (no setting): ${adaptive.text}`);
  const fixed =
    process.env["BENCH_ANCHOR"] === "0"
      ? undefined
      : nightFigures(
          await night("static", { SUBMIT_RATE_ADAPTIVE: "false", SUBMIT_RATE_PER_SEC: String(CAPACITY) }),
        );
  if (fixed !== undefined) log(`static limiter at ${CAPACITY}/s: ${fixed.text}`);
  log(
    JSON.stringify({
      capacity_used: adaptive.capacityUsed,
      throttled_per_invoice: adaptive.throttledPerInvoice,
      settle_s: adaptive.settleS,
      static_capacity_used: fixed?.capacityUsed,
      steady_capacity_used: adaptive.steadyCapacityUsed,
      static_throttled_per_invoice: fixed?.throttledPerInvoice,
      time_s: adaptive.timeS,
      ideal_s: adaptive.idealS,
    }),
  );
} finally {
  await sim.close();
  await redis.dispose();
}
