// One drawn service's night against the simulator with real processes (bench/capacity-sample.ts): the
// simulator in its own process serving the spec, and per deployment `run` plus processes − 1 workers, each
// deployment its own QUEUE_PREFIX, drop folder and invoices.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NightOptions } from "../src/dev/fleet-model/night.js";
import type { JudgedNight, ServiceSpec } from "../src/dev/fleet-model/service-space.js";
import { simulatorOptionsOf } from "../src/dev/fleet-model/service-simulator.js";
import { simulatorStatsSchema, type SimulatorStats } from "../src/simulator/index.js";
import { spawnEntry, type Exit } from "./chaos/processes.js";
import { writeCsv } from "./generate.js";
import { startSimProcess } from "./support.js";

const API_KEY = "irs_live_bench_key_000000";
/** A night meant to last 20–40 s that is not over in three minutes will not finish: `run` gives up. */
const DEADLINE = "180s";

export interface MeasuredNight {
  readonly outcome: JudgedNight;
  /** Each deployment's `run`: its exit code, how long its night took (s), its invoices not final. */
  readonly runs: readonly { readonly code: number | null; readonly seconds: number; readonly left: number }[];
}

/** Runs `night` (nightOf(spec)) end to end and reads what the simulator counted. */
export async function sampleNight(
  spec: ServiceSpec,
  night: NightOptions,
  redisUrl: string,
  label: string,
): Promise<MeasuredNight> {
  const sim = await startSimProcess(API_KEY, simulatorOptionsOf(night));
  try {
    // each deployment its own invoices, split as the fleet model splits them
    const counts = Array.from({ length: spec.deployments }, (_, d) =>
      Math.floor((night.invoices + spec.deployments - 1 - d) / spec.deployments),
    );
    const prepared = await Promise.all(
      counts.map((n, d) =>
        deployment(`${label}-d${d + 1}`, n, d * night.invoices, spec.processes, sim.url, redisUrl),
      ),
    );
    const runs = await Promise.all(prepared.map((start) => start()));
    const endedAt = Math.max(...runs.map((r) => r.endedAt));
    const stats = simulatorStatsSchema.parse(await (await fetch(`${sim.url}/__sim/stats`)).json());
    const acceptedBy = counts.map((n, d) => n - (runs[d]?.left ?? n));
    return {
      outcome: outcomeOf(stats, spec, night.invoices, endedAt, acceptedBy),
      runs: runs.map((r) => ({ code: r.exit.code, seconds: Math.round(r.seconds), left: r.left })),
    };
  } finally {
    await sim.stop();
  }
}

/** Workers started and ready; the returned function starts `run` and resolves when the night is over. */
async function deployment(
  label: string,
  invoices: number,
  offset: number,
  processes: number,
  simUrl: string,
  redisUrl: string,
): Promise<() => Promise<{ exit: Exit; endedAt: number; left: number; seconds: number }>> {
  const drop = await mkdtemp(join(tmpdir(), "bench-sample-"));
  await writeCsv(join(drop, "night.csv"), invoices, offset);
  const env = {
    REDIS_URL: redisUrl,
    INVOICE_API_URL: simUrl,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: `bench-sample-${label}-${Date.now()}`,
    DROP_DIR: drop,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
  };
  const workers = Array.from({ length: processes - 1 }, (_, i) =>
    spawnEntry(
      `${label} worker ${i + 1}`,
      "workers/cli.js",
      ["worker"],
      { ...env, LOG_LEVEL: "info" },
      "submission worker started",
    ),
  );
  await Promise.all(workers.map((w) => w.ready));
  return async () => {
    const startedAt = Date.now();
    const run = spawnEntry(`${label} run`, "workers/cli.js", ["run", "--deadline", DEADLINE], env);
    const exit = await run.exited;
    const endedAt = Date.now();
    await Promise.all(workers.map((w) => w.stop("SIGTERM")));
    await rm(drop, { recursive: true, force: true });
    // a run that did not finish says how many of its invoices were not final yet (run-outcome.ts)
    const notFinal = /with (\d+) invoice\(s\) not final yet/.exec(run.tail())?.[1];
    const left = exit.code === 0 ? 0 : notFinal === undefined ? invoices : Number(notFinal);
    if (exit.code !== 0) process.stderr.write(`${label}: run exit ${exit.code}, ${left} not final\n`);
    return { exit, endedAt, left, seconds: (endedAt - startedAt) / 1000 };
  };
}

/**
 * The judge's input from the simulator's counts: admitted and refused per second from its first request;
 * the work in hand at each second is the invoices less those the service had kept by then (admitted, less
 * the shares refused at random or failed, which are sent again), the model's backlog as seen from the
 * service; routed is the effects the service committed (every invoice once when the night finished).
 */
function outcomeOf(
  stats: SimulatorStats,
  spec: ServiceSpec,
  invoices: number,
  endedAt: number,
  acceptedBy: readonly number[],
): JudgedNight {
  const perSecond = stats.capacity.perSecond.filter((s) => s.admitted + s.refused > 0);
  const first = perSecond[0]?.second ?? Math.floor(endedAt / 1000);
  const kept = (1 - spec.randomRefused) * (1 - spec.outages);
  const admitted = new Map(perSecond.map((s) => [s.second, s.admitted]));
  const backlog: number[] = [];
  let done = 0;
  for (let s = first; s <= Math.floor(endedAt / 1000); s++) {
    backlog.push(Math.max(0, invoices - done));
    done += (admitted.get(s) ?? 0) * kept;
  }
  return {
    startedAt: first * 1000,
    endedAt,
    routed: stats.effects.total,
    refused: stats.capacity.refused,
    perSecond,
    backlog,
    acceptedBy,
  };
}
