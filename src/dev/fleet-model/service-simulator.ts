import type { SimulatorOptions } from "../../simulator/index.js";
import type { NightOptions } from "./night.js";

/** The service's answers slow as its bucket empties, as the fleet model's do (night.ts). */
const LATENCY_AT_CAPACITY_MS = 20;
/** The bucket, not the simulator's in-flight ceiling, limits a drawn service (as in nightOf). */
const MOST_IN_FLIGHT = 1_000_000;

/**
 * The simulator's options that serve the service a model night runs against (nightOf in service-space.ts):
 * the same bucket, windows, refusal status and `Retry-After` form, answer times with their tail and jump,
 * refusals at random, outages and changes, so that `npm run bench:capacity -- --sample` and the fleet model
 * judge one service. The model fails an admitted request with `errors` only if it was not refused at random;
 * the simulator draws both from one draw, so its error share is that product.
 */
export function simulatorOptionsOf(night: NightOptions): SimulatorOptions {
  const random = night.random429 ?? 0;
  const latency = night.latencyMs ?? { min: 20, max: 40 };
  return {
    seed: night.seed,
    capacity: {
      ratePerSec: night.capacity,
      burst: night.burst ?? Math.max(1, Math.round(night.capacity / 10)),
      maxInFlight: MOST_IN_FLIGHT,
      latencyAtCapacityMs: LATENCY_AT_CAPACITY_MS,
      ...night.limit,
      retryAfterForm: night.retryAfter ?? "whole",
      clockSkewMs: night.clockSkewMs ?? 0,
    },
    capacityChanges: (night.changes ?? []).map((c) => ({ atMs: c.atMs, patch: c.patch })),
    throttleRate: random,
    throttleRetryAfter: night.random429Bare !== true,
    retryAfterSeconds: 1,
    errorRate: (night.errors ?? 0) * (1 - random),
    latencyMs: { min: Math.round(latency.min), max: Math.round(latency.max) },
    latencyTail: night.latencyTail === true,
    latencyJump: night.latencyJump ?? null,
  };
}
