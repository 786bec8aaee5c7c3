import { describe, expect, it } from "vitest";
import { SHAPES, capacityAt, secondsFrom, type Shape } from "../../src/dev/fleet-model/matrix.js";
import { modelNight } from "../../src/dev/fleet-model/night.js";

/** Seconds after the first probe: the night's first seconds are slow start, which may overshoot once. */
const FIRST_PROBE_S = 3;

// The fleet model runs the relay's own pacers (src/capacity) for three processes against the simulator's
// capacity model on virtual time: behaviours of the controller on every shape of limit, not timings of
// this machine (those are `npm run bench:capacity -- --matrix`'s).
const INVARIANTS =
  "every invoice is routed once, the fleet is never past the capacity by more than its burst for longer than a second, nor stuck under half of it for 5 s, and a service refusing everything is asked once per wait";

/**
 * Shapes the matrix (and so the benchmark) never uses, on seeds it never runs: a burst of a whole second
 * or of one request, 40/s, long answers, a high rate with a small burst, 503 overload and random 429s at
 * other rates, a service refusing everything without saying for how long and coming back faster.
 */
const UNTUNED: readonly Shape[] = [
  { name: "40/s, burst 4", invoices: 1200, capacity: 40, burst: 4 },
  { name: "60/s, a second's burst", invoices: 1800, capacity: 60, burst: 60 },
  { name: "80/s, burst 1", invoices: 2400, capacity: 80, burst: 1 },
  {
    name: "200/s, answers in 100–300 ms",
    invoices: 4000,
    capacity: 200,
    burst: 20,
    latencyMs: { min: 100, max: 300 },
  },
  { name: "2000/s, burst 10", invoices: 30_000, capacity: 2000, burst: 10 },
  { name: "100/s, 5 % refused at random", invoices: 6000, capacity: 100, burst: 10, random429: 0.05 },
  {
    name: "500/s, overload answered 503",
    invoices: 8000,
    capacity: 500,
    burst: 50,
    limit: { refuseWith: 503 },
  },
  {
    name: "1000/s, refusing everything for 10 s without Retry-After, back at 3000/s",
    invoices: 30_000,
    capacity: 1000,
    burst: 100,
    changes: [
      { atMs: 3000, patch: { ratePerSec: 0, retryAfterSeconds: 0 } },
      { atMs: 13_000, patch: { ratePerSec: 3000, retryAfterSeconds: null } },
    ],
  },
];

describe("three processes sharing one learned rate, on every shape of limit (virtual time)", () => {
  it.each(SHAPES.map((shape) => [shape.name, shape] as const))(`%s: ${INVARIANTS}`, (_name, shape) =>
    expectInvariants(shape, 11),
  );
});

describe("three processes sharing one learned rate, on shapes the matrix never uses (virtual time)", () => {
  it.each(UNTUNED.map((shape) => [shape.name, shape] as const))(`%s: ${INVARIANTS}`, (_name, shape) =>
    expectInvariants(shape, 21),
  );
});

async function expectInvariants(shape: Shape, seed: number): Promise<void> {
  const night = await modelNight({ processes: 3, seed, limitMs: 900_000, ...shape });
  expect(night.routed).toBe(shape.invoices);
  const seconds = secondsFrom(night.perSecond, night.startedAt);
  const last = seconds.length - 1; // partial: the night ended in it

  // past the capacity by more than its burst: every refusal is a request past it (quota windows and a
  // service refusing everything refuse by design, and say for how long)
  const refusing =
    shape.limit?.windows !== undefined || (shape.changes ?? []).some((c) => c.patch.ratePerSec === 0);
  if (!refusing) {
    const over = seconds.map((s, i) => i > FIRST_PROBE_S && i < last && s.refused > shape.burst);
    const overrun = over.findIndex((o, i) => o && over[i + 1] === true && over[i + 2] === true);
    expect(overrun, JSON.stringify(seconds)).toBe(-1);
  }

  // while the service refuses everything and says for how long, the fleet asks it once per wait: a
  // whole second inside the refusal (and a second past its first, for the requests under way then)
  // sees one refusal, two at a second's edge
  for (const [i, change] of (shape.changes ?? []).entries()) {
    const wait = change.patch.retryAfterSeconds;
    if (change.patch.ratePerSec !== 0 || wait === undefined || wait === null) continue;
    const end = shape.changes?.[i + 1]?.atMs ?? Infinity;
    for (let second = Math.ceil(change.atMs / 1000) + 2; (second + 1) * 1000 <= end; second++)
      expect(
        seconds[second]?.refused ?? 0,
        `second ${second}: ${JSON.stringify(seconds)}`,
      ).toBeLessThanOrEqual(2);
  }

  // under half the capacity for 5 s on end while invoices remained; with quota windows the service
  // holds the fleet for a minute's rest by design, and the long-run rate is what counts
  if (shape.longRun !== undefined) {
    const admitted = seconds.reduce((sum, s) => sum + s.admitted, 0);
    expect(admitted / seconds.length).toBeGreaterThan(shape.longRun / 2);
    return;
  }
  let under = 0;
  seconds.forEach((s, i) => {
    if (i <= FIRST_PROBE_S || i >= last) return;
    const capacity = capacityAt(shape, i * 1000);
    under = capacity > 0 && s.admitted < capacity / 2 ? under + 1 : 0;
    expect(under, `second ${i}: ${JSON.stringify(seconds)}`).toBeLessThanOrEqual(5);
  });
}
