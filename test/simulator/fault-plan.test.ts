import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planAttempt } from "../../src/simulator/fault-plan.js";
import { NO_FAULTS, type Faults } from "../../src/simulator/options.js";
import { attemptSeed, mulberry32 } from "../../src/simulator/prng.js";

const faults = (over: Partial<Faults>): Faults => ({ ...NO_FAULTS, ...over });

describe("fault plan (pure)", () => {
  it("when there are no faults, then every attempt is clean and answered without delay", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.integer(), fc.nat(), (key, seed, attempt) => {
        expect(planAttempt(NO_FAULTS, seed, key, attempt)).toEqual({ fault: undefined, latencyMs: 0 });
      }),
    );
  });

  it("when rates are set, then over many keys each fault kind gets close to its share", () => {
    const f = faults({ errorRate: 0.2, throttleRate: 0.1, lostRate: 0.05 });
    const counts = { error: 0, throttle: 0, lost: 0, none: 0 };
    const n = 20_000;
    for (let i = 0; i < n; i++) counts[planAttempt(f, 3, randomUUID(), 1).fault ?? "none"]++;
    expect(counts.error / n).toBeCloseTo(0.2, 1);
    expect(counts.throttle / n).toBeCloseTo(0.1, 1);
    expect(counts.lost / n).toBeCloseTo(0.05, 1);
  });

  it("when the same seed, key and attempt are drawn again, then the plan is the same", () => {
    const f = faults({ errorRate: 0.3, lostRate: 0.3, latencyMs: { min: 10, max: 500 } });
    fc.assert(
      fc.property(fc.uuid(), fc.integer(), fc.integer({ min: 1, max: 50 }), (key, seed, attempt) => {
        expect(planAttempt(f, seed, key, attempt)).toEqual(planAttempt(f, seed, key, attempt));
      }),
    );
  });

  it("when latency is a range, then every draw lies within it, both ends included", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.nat({ max: 1000 }), fc.nat({ max: 50 }), (key, min, width) => {
        const { latencyMs } = planAttempt(faults({ latencyMs: { min, max: min + width } }), 1, key, 1);
        expect(latencyMs).toBeGreaterThanOrEqual(min);
        expect(latencyMs).toBeLessThanOrEqual(min + width);
        expect(Number.isInteger(latencyMs)).toBe(true);
      }),
    );
  });

  it("when the attempt number changes, then the draw changes (a retry is not doomed to repeat its fault)", () => {
    const key = randomUUID();
    const seeds = new Set(Array.from({ length: 100 }, (_, i) => attemptSeed(5, key, i + 1)));
    expect(seeds.size).toBe(100);
  });

  it("when mulberry32 is seeded alike, then it yields the same numbers in [0, 1)", () => {
    const a = mulberry32(123);
    const b = mulberry32(123);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.filter((x) => !(x >= 0 && x < 1))).toEqual([]);
    expect(new Set(xs).size).toBe(1000);
  });
});
