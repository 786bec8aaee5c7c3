import { randomInt } from "node:crypto";
import { z } from "zod";

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The chaos run's knobs, from the environment; everything else is fixed by the issue's fault model. */
const optionsSchema = z.object({
  CHAOS_INVOICES: count(10, 1_000_000).default(10_000),
  CHAOS_FILES: count(1, 50).default(5),
  CHAOS_WORKERS: count(1, 8).default(2),
  CHAOS_WORKER_KILLS: count(0, 20).default(3),
  /** Seeds the kill points and the simulator's faults; printed, so a failing run can be replayed. */
  CHAOS_SEED: count(0, 2 ** 31 - 1).optional(),
  /** The run is abandoned (and fails) after this long, so a lost invoice cannot hang CI. */
  CHAOS_TIMEOUT_S: count(10, 7200).default(900),
  /**
   * How Redis goes down: `term` (SIGTERM: the AOF is written out, an operator's restart), `kill`
   * (SIGKILL: a crash of redis-server; the kernel still holds every write it made) or `power` (SIGKILL
   * and the AOF cut back to what it held 1 s earlier: a host crash with appendfsync everysec).
   */
  CHAOS_REDIS_RESTART: z.enum(["term", "kill", "power"]).default("term"),
  /** Keep the drop folder and Redis folder for inspection even when every check passed. */
  CHAOS_KEEP: z.enum(["0", "1"]).default("0"),
});

export interface ChaosOptions {
  readonly invoices: number;
  readonly files: number;
  readonly workers: number;
  readonly killsPerWorker: number;
  readonly seed: number;
  readonly timeoutMs: number;
  readonly keep: boolean;
  readonly redisRestart: "term" | "kill" | "power";
}

export function chaosOptions(env: NodeJS.ProcessEnv): ChaosOptions {
  const parsed = optionsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  - ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid chaos settings:\n${lines.join("\n")}`);
  }
  const o = parsed.data;
  if (o.CHAOS_INVOICES < o.CHAOS_FILES) throw new Error("CHAOS_INVOICES must be at least CHAOS_FILES");
  return {
    invoices: o.CHAOS_INVOICES,
    files: o.CHAOS_FILES,
    workers: o.CHAOS_WORKERS,
    killsPerWorker: o.CHAOS_WORKER_KILLS,
    seed: o.CHAOS_SEED ?? randomInt(2 ** 31 - 1),
    timeoutMs: o.CHAOS_TIMEOUT_S * 1000,
    keep: o.CHAOS_KEEP === "1",
    redisRestart: o.CHAOS_REDIS_RESTART,
  };
}

/** The simulator's faults, as docs/reliability.md ("The chaos suite") fixes them: 20 % 503, 5 % 429 + Retry-After, 5 % lost, 0-50 ms. */
export const FAULTS = {
  errorRate: 0.2,
  throttleRate: 0.05,
  retryAfterSeconds: 1,
  lostRate: 0.05,
  latencyMs: { min: 0, max: 50 },
} as const;
