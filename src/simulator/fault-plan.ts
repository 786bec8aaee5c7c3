import type { Faults } from "./options.js";
import { attemptSeed, mulberry32 } from "./prng.js";
import { latencyFactor } from "./service-answers.js";

export type FaultKind = "error" | "throttle" | "lost";

/** What happens to one attempt: an injected fault (or none) and how long to wait before answering. */
export interface FaultPlan {
  readonly fault: FaultKind | undefined;
  readonly latencyMs: number;
}

/**
 * Draws the fate of attempt `attempt` (1-based) of `key`, `sinceMs` into the night (for a latency jump).
 * The three rates share one uniform draw, so they are exact shares of all attempts: with errorRate 0.1 and
 * throttleRate 0.1, 10% get 503 and 10% get 429.
 */
export function planAttempt(
  faults: Faults,
  seed: number,
  key: string,
  attempt: number,
  sinceMs = 0,
): FaultPlan {
  const { errorRate, throttleRate, lostRate, latencyMs } = faults;
  const noFaults = errorRate === 0 && throttleRate === 0 && lostRate === 0;
  const fixedLatency = latencyMs.min === latencyMs.max;
  const shape = { tail: faults.latencyTail, jump: faults.latencyJump };
  // without a tail nothing is drawn for the latency
  if (noFaults && fixedLatency && !shape.tail)
    return { fault: undefined, latencyMs: latencyMs.min * latencyFactor(shape, sinceMs, () => 1) };

  const next = mulberry32(attemptSeed(seed, key, attempt));
  const u = next();
  const fault: FaultKind | undefined =
    u < errorRate
      ? "error"
      : u < errorRate + throttleRate
        ? "throttle"
        : u < errorRate + throttleRate + lostRate
          ? "lost"
          : undefined;
  const delay = fixedLatency
    ? latencyMs.min
    : latencyMs.min + Math.floor(next() * (latencyMs.max - latencyMs.min + 1));
  return { fault, latencyMs: Math.round(delay * latencyFactor(shape, sinceMs, next)) };
}
