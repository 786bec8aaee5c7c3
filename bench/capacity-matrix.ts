// npm run bench:capacity [-- --matrix] (bench/capacity.ts) — nights against a service whose limit the relay is not told:
// `run` and two `worker` processes against the simulator, each night then again with BullMQ's fixed
// limiter set to the true figure (the anchor). Without --matrix, one shape (300/s, a third of it for 12 s);
// with it, every shape of src/dev/fleet-model/matrix.ts. Prints one row per shape (capacity used over the
// night and from the first second at 0.8 of the capacity on, refused per invoice, seconds to settle after
// each change, the fixed limiter's beside them), then one JSON line per shape. BENCH_ANCHOR=0 leaves the fixed limiter out; BENCH_SHAPE=<part of a name> runs the shapes
// whose name holds it; BENCH_SECONDS=1 prints each night's admitted/refused per second.
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../src/dev/redis-server.js";
import {
  SHAPES,
  figures,
  secondsFrom,
  type Shape,
  type ShapeFigures,
} from "../src/dev/fleet-model/matrix.js";
import { startSimulator, type SimulatorHandle } from "../src/simulator/index.js";
import { spawnEntry, killAllSpawned, describeExit } from "./chaos/processes.js";
import { writeCsv } from "./generate.js";

const API_KEY = "irs_live_bench_key_000000";
const MATRIX = process.argv.includes("--matrix");
const ANCHOR = process.env["BENCH_ANCHOR"] !== "0";
const log = (line: string) => process.stdout.write(`${line}\n`);

const redis = await RedisServer.start();
const sim = await startSimulator({ apiKey: API_KEY });
process.on("exit", killAllSpawned);

/** One night of `shape`: `run` + 2 workers; its changes applied from the first request on. */
async function night(shape: Shape, label: string, relayEnv: Record<string, string>): Promise<ShapeFigures> {
  sim.reset();
  sim.setCapacity({
    ratePerSec: shape.capacity,
    burst: shape.burst,
    maxInFlight: 4096,
    latencyAtCapacityMs: 20,
    ...shape.limit,
  });
  sim.setFaults({
    latencyMs: shape.latencyMs ?? { min: 20, max: 40 },
    throttleRate: shape.random429 ?? 0,
    retryAfterSeconds: 1,
  });
  const drop = await mkdtemp(join(tmpdir(), "bench-capacity-"));
  await writeCsv(join(drop, "night.csv"), shape.invoices);
  const env = {
    REDIS_URL: redis.url,
    INVOICE_API_URL: sim.url,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: `bench-capacity-${label}-${Date.now()}`,
    DROP_DIR: drop,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    RETRY_AFTER_CAP_MS: "120000",
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
  const run = spawnEntry(`${label} run`, "workers/cli.js", ["run", "--deadline", "900s"], env);
  const changes = scheduleChanges(sim, shape);
  const exit = await run.exited;
  changes.cancel();
  await Promise.all(workers.map((w) => w.stop("SIGTERM")));
  await rm(drop, { recursive: true, force: true });
  if (exit.code !== 0) throw new Error(`${label}: run ${describeExit(exit)}:\n${run.tail()}`);
  const stats = sim.stats();
  const seconds = secondsFrom(stats.capacity.perSecond, await changes.started);
  if (process.env["BENCH_SECONDS"] === "1")
    log(
      `${label}: admitted/refused per second ${seconds.map((x) => `${x.admitted}/${x.refused}`).join(" ")}`,
    );
  return figures(shape, seconds, stats.faults.throttle);
}

/** Starts the clock at the first request the simulator sees, then applies the shape's changes. */
function scheduleChanges(s: SimulatorHandle, shape: Shape): { started: Promise<number>; cancel: () => void } {
  const timers: NodeJS.Timeout[] = [];
  const started = new Promise<number>((resolve) => {
    s.events.once("attempt", (attempt) => {
      for (const change of shape.changes ?? [])
        timers.push(setTimeout(() => s.setCapacity(change.patch), change.atMs - (Date.now() - attempt.at)));
      resolve(attempt.at);
    });
  });
  return {
    started,
    cancel: () => {
      timers.forEach(clearTimeout);
    },
  };
}

/** BullMQ's fixed limiter at the shape's true figure: its long-run rate, or its starting capacity. */
const trueFigure = (shape: Shape): number => Math.max(1, Math.floor(shape.longRun ?? shape.capacity));
const r2 = (n: number) => n.toFixed(2);
const settle = (f: ShapeFigures) =>
  f.settleS.length === 0 ? "-" : f.settleS.map((s) => s.toFixed(1)).join("/");

try {
  const only = process.env["BENCH_SHAPE"];
  const chosen = MATRIX ? SHAPES : SHAPES.filter((s) => s.name.startsWith("300/s, a third"));
  const shapes = only === undefined ? chosen : SHAPES.filter((s) => s.name.includes(only));
  log(
    `bench:capacity: run + 2 workers; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  log(
    "shape | used | steady used (first probe s) | refused/invoice | settle s | fixed limiter used | fixed refused/invoice",
  );
  const lines: string[] = [];
  for (const shape of shapes) {
    const learned = await night(shape, "learned", {});
    const fixed = ANCHOR
      ? await night(shape, "fixed", {
          SUBMIT_RATE_ADAPTIVE: "false",
          SUBMIT_RATE_PER_SEC: String(trueFigure(shape)),
        })
      : undefined;
    log(
      `${shape.name} | ${r2(learned.used)} | ${r2(learned.steadyUsed)} (${learned.probeS}) | ` +
        `${learned.refusedPerInvoice.toFixed(3)} | ${settle(learned)} | ` +
        `${fixed === undefined ? "-" : r2(fixed.used)} | ${fixed === undefined ? "-" : fixed.refusedPerInvoice.toFixed(3)}`,
    );
    lines.push(
      JSON.stringify({
        shape: shape.name,
        capacity_used: Math.round(learned.used * 1000) / 1000,
        steady_used: Math.round(learned.steadyUsed * 1000) / 1000,
        first_probe_s: learned.probeS,
        refused_per_invoice: Math.round(learned.refusedPerInvoice * 1000) / 1000,
        settle_s: learned.settleS.map((s) => Math.round(s * 10) / 10),
        fixed_capacity_used: fixed === undefined ? null : Math.round(fixed.used * 1000) / 1000,
        fixed_refused_per_invoice:
          fixed === undefined ? null : Math.round(fixed.refusedPerInvoice * 1000) / 1000,
      }),
    );
  }
  for (const line of lines) log(line);
  log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await sim.close();
  await redis.dispose();
}
