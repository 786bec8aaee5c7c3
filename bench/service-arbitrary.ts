import fc from "fast-check";
import type { ServiceSpec } from "../src/dev/fleet-model/service-space.js";

/** A value spread evenly over the logarithm, between `low` and `high` (integers). */
const logUniform = (low: number, high: number) =>
  fc.integer({ min: 0, max: 1000 }).map((i) => Math.round(low * (high / low) ** (i / 1000)));

const windows = (capacity: number) =>
  fc.subarray([1, 10, 60]).chain((lengths) =>
    fc.tuple(
      ...lengths.map((seconds) =>
        // a window binding somewhere between a tenth of the bucket and the bucket itself
        fc.tuple(fc.integer({ min: 10, max: 100 }), fc.boolean()).map(([pct, fixed]) => ({
          seconds,
          limit: Math.max(1, Math.round((capacity * seconds * pct) / 100)),
          fixed,
        })),
      ),
    ),
  );

/** The space of services (src/dev/fleet-model/service-space.ts), each axis drawn apart. */
export const serviceSpace: fc.Arbitrary<ServiceSpec> = logUniform(5, 3000).chain((capacity) =>
  fc.record({
    capacity: fc.constant(capacity),
    burst: logUniform(1, 10 * capacity),
    refuseWith: fc.constantFrom(429 as const, 503 as const),
    retryAfter: fc.constantFrom<ServiceSpec["retryAfter"]>(
      "whole",
      "none",
      "zero",
      "decimal",
      "date",
      "fixed",
    ),
    fixedSeconds: fc.integer({ min: 5, max: 60 }),
    clockSkewMs: fc.integer({ min: -10_000, max: 10_000 }),
    windows: fc.oneof(fc.constant([]), windows(capacity)),
    latency: fc.constantFrom<ServiceSpec["latency"]>("constant", "uniform", "long-tail"),
    latencyMs: fc.integer({ min: 5, max: 400 }),
    latencyJump: fc.boolean(),
    randomRefused: fc.integer({ min: 0, max: 20 }).map((pct) => pct / 100),
    randomBare: fc.boolean(),
    outages: fc.integer({ min: 0, max: 25 }).map((pct) => pct / 100),
    change: fc.constantFrom<ServiceSpec["change"]>("none", "drop", "rise", "zero"),
    dropBy: fc.integer({ min: 2, max: 10 }),
    processes: fc.integer({ min: 1, max: 5 }),
    deployments: fc.constantFrom(1 as const, 2 as const),
  }),
);
