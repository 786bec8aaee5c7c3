import { setTimeout as delay } from "node:timers/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { serviceSpace } from "../../bench/service-arbitrary.js";
import { nightOf } from "../../src/dev/fleet-model/service-space.js";
import { simulatorOptionsOf } from "../../src/dev/fleet-model/service-simulator.js";
import { CapacityModel, type Capacity } from "../../src/simulator/capacity.js";
import { planAttempt } from "../../src/simulator/fault-plan.js";
import { NO_FAULTS, simulatorOptionsSchema, type SimulatorOptions } from "../../src/simulator/index.js";
import { header, submit, type Answer } from "./support/client.js";
import { simulatorsPerTest } from "./support/simulators.js";

const start = simulatorsPerTest();

/** One token every two seconds: a second request at once is refused with a wait of about 2 s. */
const SLOW: Capacity = { ratePerSec: 0.5, burst: 1, maxInFlight: 100, latencyAtCapacityMs: 0 };

/** The answer to a second request sent at once to a simulator started with `options`. */
async function refusal(options: SimulatorOptions): Promise<Answer> {
  const sim = await start(options);
  expect((await submit(sim)).status).toBe(201);
  return submit(sim);
}

describe("the simulator serves each axis of a drawn service", () => {
  it("when a refusal's Retry-After form is set, then the wire says the wait in that form: whole seconds rounded up, fixed, none, 0, decimal", async () => {
    const said = async (capacity: Partial<Capacity>) =>
      header(await refusal({ capacity: { ...SLOW, ...capacity } }), "retry-after");
    expect(await said({})).toBe("2");
    expect(await said({ retryAfterSeconds: 7 })).toBe("7");
    expect(await said({ retryAfterForm: "none" })).toBeUndefined();
    expect(await said({ retryAfterForm: "zero" })).toBe("0");
    const decimal = await said({ retryAfterForm: "decimal" });
    expect(decimal).toMatch(/^\d+\.\d{3}$/);
    expect(Number(decimal)).toBeGreaterThan(1);
    expect(Number(decimal)).toBeLessThanOrEqual(2);
  });

  it("when the form is an HTTP date on a clock 5 s ahead, then Retry-After and Date are dates on that clock, the wait between them", async () => {
    const answer = await refusal({ capacity: { ...SLOW, retryAfterForm: "date", clockSkewMs: 5000 } });
    const date = Date.parse(header(answer, "date") ?? "");
    const until = Date.parse(header(answer, "retry-after") ?? "");
    expect(date - Date.now()).toBeGreaterThan(3000);
    expect(until - date).toBeGreaterThanOrEqual(2000);
    expect(until - date).toBeLessThanOrEqual(3000);
  });

  it("when the service refuses with 503, then a refusal for capacity is a 503 with Retry-After", async () => {
    const answer = await refusal({ capacity: { ...SLOW, refuseWith: 503 } });
    expect([answer.status, header(answer, "retry-after")]).toEqual([503, "2"]);
  });

  it("when random refusals are bare, then the 429 has no Retry-After; otherwise it says 1", async () => {
    const sim = await start({ throttleRate: 1, throttleRetryAfter: false });
    const bare = await submit(sim);
    expect([bare.status, header(bare, "retry-after")]).toEqual([429, undefined]);
    const told = await submit(await start({ throttleRate: 1 }));
    expect([told.status, header(told, "retry-after")]).toEqual([429, "1"]);
  });

  it("when the night's capacity drops to 0 at 100 ms, then after it, the bucket spent, a request is refused and asked to come back in a minute", async () => {
    const sim = await start({
      capacity: { ratePerSec: 1000, burst: 1, maxInFlight: 100, latencyAtCapacityMs: 0 },
      capacityChanges: [{ atMs: 100, patch: { ratePerSec: 0 } }],
    });
    expect((await submit(sim)).status).toBe(201);
    await delay(250);
    expect(sim.stats().capacity.limit?.ratePerSec).toBe(0);
    await submit(sim); // the token kept from before the change
    const after = await submit(sim);
    expect([after.status, header(after, "retry-after")]).toEqual([429, "60"]);
  });
});

describe("the capacity model's quota windows", () => {
  const limit = (fixed: boolean): Capacity => ({
    ratePerSec: 1000,
    burst: 1000,
    maxInFlight: 1000,
    latencyAtCapacityMs: 0,
    windows: [{ limit: 2, seconds: 60, fixed }],
  });

  it("when a sliding window is full, then the next request is refused until the first of it is a window old", () => {
    const clock = { now: 1_800_000_030_000 };
    const capacity = new CapacityModel(limit(false), () => clock.now);
    capacity.admit();
    clock.now += 10_000;
    capacity.admit();
    expect(capacity.admit()).toMatchObject({ admitted: false, reason: "quota", retryAfterSeconds: 50 });
    clock.now += 50_000;
    expect(capacity.admit().admitted).toBe(true);
  });

  it("when a fixed window is full, then the next request is refused until the clock's next window begins", () => {
    const clock = { now: 1_800_000_030_000 }; // 30 s into a minute of the clock
    const capacity = new CapacityModel(limit(true), () => clock.now);
    capacity.admit();
    capacity.admit();
    expect(capacity.admit()).toMatchObject({ admitted: false, reason: "quota", retryAfterSeconds: 30 });
    clock.now += 30_000;
    expect(capacity.admit().admitted).toBe(true);
  });
});

describe("the simulator's answer times", () => {
  const faults = { ...NO_FAULTS, latencyMs: { min: 10, max: 10 } };

  it("when answers jump ×20 from 1 s to 2 s into the night, then only answers in that stretch take twenty times as long", () => {
    const jumped = { ...faults, latencyJump: { atMs: 1000, untilMs: 2000, factor: 20 } };
    const at = (sinceMs: number) => planAttempt(jumped, 1, "k", 1, sinceMs).latencyMs;
    expect([at(500), at(1500), at(2500)]).toEqual([10, 200, 10]);
  });

  it("when answers have a long tail, then about one in twenty takes ten times as long", () => {
    const tailed = { ...faults, latencyTail: true };
    const slow = Array.from({ length: 2000 }, (_, i) => planAttempt(tailed, 1, `key-${i}`, 1).latencyMs);
    expect(new Set(slow)).toEqual(new Set([10, 100]));
    const share = slow.filter((ms) => ms === 100).length / slow.length;
    expect(share).toBeGreaterThan(0.03);
    expect(share).toBeLessThan(0.07);
  });
});

describe("a drawn service as the simulator's options", () => {
  it("when any service of the space is drawn, then its options are valid and say its bucket, Retry-After form, refusals and changes", () => {
    for (const spec of fc.sample(serviceSpace, { numRuns: 200, seed: 7 })) {
      const night = nightOf(spec, 1);
      const options = simulatorOptionsSchema.parse(simulatorOptionsOf(night));
      expect(options.capacity).toMatchObject({
        ratePerSec: spec.capacity,
        burst: spec.burst,
        refuseWith: spec.refuseWith,
        retryAfterForm: spec.retryAfter === "fixed" ? "whole" : spec.retryAfter,
        ...(spec.retryAfter === "fixed" && { retryAfterSeconds: spec.fixedSeconds }),
      });
      expect(options.capacity?.windows ?? []).toEqual(spec.windows);
      expect(options.throttleRate).toBe(spec.randomRefused);
      expect(options.throttleRetryAfter).toBe(!spec.randomBare);
      expect(options.latencyTail).toBe(spec.latency === "long-tail");
      expect(options.latencyJump !== null).toBe(spec.latencyJump);
      expect(options.capacityChanges.length).toBe({ none: 0, drop: 1, rise: 1, zero: 2 }[spec.change]);
    }
  });
});
