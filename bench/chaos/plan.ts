import { mulberry32 } from "../../src/simulator/prng.js";

/** A worker kill: when the simulator has committed `atEffects` invoices, SIGKILL worker `worker`. */
export interface WorkerKill {
  readonly worker: number;
  readonly atEffects: number;
  /** How long the worker stays dead before its replacement is started. */
  readonly downMs: number;
}

/** Where the faults strike, drawn from the seed so that a failing run can be replayed. */
export interface ChaosPlan {
  readonly workerKills: readonly WorkerKill[];
  /** The file (0-based, in claim order) whose ingest is killed after its first rows are registered. */
  readonly ingestKillFile: number;
  readonly redisRestartAtEffects: number;
  /** How long Redis stays down: a real restart or failover takes seconds, not the 0.2 s of a local one. */
  readonly redisDownMs: number;
}

/**
 * Kill points are measured in committed invoices rather than seconds, so they fall at the same stage of
 * the work on a fast or a slow machine. They stay inside 5-85 % of the work so that each lands while
 * there is work in flight; the Redis restart falls in the middle third and
 * keeps Redis down for 1-3 s.
 */
export function chaosPlan(
  seed: number,
  invoices: number,
  files: number,
  workers: number,
  killsPerWorker: number,
): ChaosPlan {
  const random = mulberry32(seed);
  const between = (lo: number, hi: number) => Math.floor(invoices * (lo + (hi - lo) * random()));
  const workerKills: WorkerKill[] = [];
  for (let w = 0; w < workers; w++) {
    for (let k = 0; k < killsPerWorker; k++) {
      workerKills.push({ worker: w, atEffects: between(0.05, 0.85), downMs: Math.floor(random() * 500) });
    }
  }
  workerKills.sort((a, b) => a.atEffects - b.atEffects);
  return {
    workerKills,
    ingestKillFile: Math.floor(random() * files),
    redisRestartAtEffects: between(0.35, 0.65),
    redisDownMs: 1000 + Math.floor(random() * 2000),
  };
}
