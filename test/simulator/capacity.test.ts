import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CapacityModel, type Capacity } from "../../src/simulator/capacity.js";
import { simulatorStatsSchema } from "../../src/simulator/index.js";
import { header, json, problemOf, send, submit } from "./support/client.js";
import { simulatorsPerTest } from "./support/simulators.js";

const start = simulatorsPerTest();

const LIMIT: Capacity = { ratePerSec: 10, burst: 3, maxInFlight: 100, latencyAtCapacityMs: 40 };

function model(limit: Capacity | null = LIMIT) {
  const clock = { now: 1_000_000 };
  return { clock, capacity: new CapacityModel(limit, () => clock.now) };
}

describe("the simulator's capacity model", () => {
  it("when more requests come than the bucket holds, then the burst is admitted and the rest refused until tokens refill", () => {
    const { clock, capacity } = model();
    const first = [capacity.admit(), capacity.admit(), capacity.admit(), capacity.admit()];
    expect(first.map((a) => a.admitted)).toEqual([true, true, true, false]);
    clock.now += 100; // one token at 10/s
    expect(capacity.admit().admitted).toBe(true);
    expect(capacity.admit().admitted).toBe(false);
    expect(capacity.stats()).toMatchObject({ admitted: 4, refused: 2 });
  });

  it("when the next token is far away, then Retry-After says how many seconds, rounded up; near, it says 1, as public APIs do", () => {
    const { capacity } = model({ ...LIMIT, ratePerSec: 0.25, burst: 1 });
    capacity.admit();
    expect(capacity.admit()).toMatchObject({
      admitted: false,
      retryAfterSeconds: 4,
      reason: "rate",
      status: 429,
    });
    const fast = model({ ...LIMIT, ratePerSec: 300, burst: 1 }).capacity;
    fast.admit();
    expect(fast.admit()).toMatchObject({
      admitted: false,
      retryAfterSeconds: 1,
      reason: "rate",
      status: 429,
    });
  });

  it("when the rate is 0, then everything is refused with a Retry-After of a minute", () => {
    const { capacity } = model({ ...LIMIT, ratePerSec: 0, burst: 1 });
    capacity.admit();
    expect(capacity.admit()).toMatchObject({
      admitted: false,
      retryAfterSeconds: 60,
      reason: "rate",
      status: 429,
    });
  });

  it("when quota windows are set (20 per second and 300 per minute at once), then a request past one is refused with the seconds until a slot of it frees", () => {
    const { capacity, clock } = model({
      ...LIMIT,
      ratePerSec: 1000,
      burst: 1000,
      windows: [
        { limit: 20, seconds: 1 },
        { limit: 30, seconds: 60 },
      ],
    });
    for (let i = 0; i < 20; i++) expect(capacity.admit().admitted).toBe(true);
    expect(capacity.admit()).toMatchObject({ admitted: false, reason: "quota", retryAfterSeconds: 1 });
    clock.now += 1000;
    for (let i = 0; i < 10; i++) expect(capacity.admit().admitted).toBe(true);
    // the minute's 30 are spent: the first slot frees 59 s from now
    expect(capacity.admit()).toMatchObject({ admitted: false, reason: "quota", retryAfterSeconds: 59 });
    clock.now += 59_000;
    expect(capacity.admit().admitted).toBe(true);
  });

  it("when the service sheds load with 503, then a request over the capacity is refused 503 with Retry-After", () => {
    const { capacity } = model({ ...LIMIT, ratePerSec: 0.25, burst: 1, refuseWith: 503 });
    capacity.admit();
    expect(capacity.admit()).toMatchObject({
      admitted: false,
      retryAfterSeconds: 4,
      reason: "rate",
      status: 503,
    });
  });

  it("when as many requests are in flight as the ceiling, then the next is refused until one is answered", () => {
    const { capacity } = model({ ...LIMIT, burst: 10, maxInFlight: 2 });
    capacity.admit();
    capacity.admit();
    expect(capacity.admit()).toMatchObject({ admitted: false, reason: "in-flight" });
    capacity.release();
    expect(capacity.admit().admitted).toBe(true);
  });

  it("when the bucket empties, then the latency added grows towards latencyAtCapacityMs", () => {
    const { capacity } = model({ ...LIMIT, burst: 4 });
    const added = [1, 2, 3, 4].map(() => {
      const a = capacity.admit();
      return a.admitted ? a.extraLatencyMs : -1;
    });
    expect(added).toEqual([...added].sort((a, b) => a - b));
    expect(added[0]).toBeLessThan(added[3] ?? 0);
    expect(added[3]).toBe(40);
  });

  it("when the limit changes at run time, then the new rate applies and the tokens kept fit the new burst", () => {
    const { clock, capacity } = model();
    capacity.set({ burst: 1 });
    expect([capacity.admit(), capacity.admit()].map((a) => a.admitted)).toEqual([true, false]);
    capacity.set({ ratePerSec: 1000 });
    clock.now += 1;
    expect(capacity.admit().admitted).toBe(true);
    capacity.set(null);
    expect(capacity.admit()).toEqual({ admitted: true, extraLatencyMs: 0 });
    expect(() => capacity.set({ burst: 0 })).toThrow(/capacity.burst must be 1 or more/);
  });

  it("when requests come over several seconds, then the stats count admitted and refused per second", () => {
    const { clock, capacity } = model({ ...LIMIT, burst: 2, ratePerSec: 1 });
    capacity.admit();
    capacity.admit();
    capacity.admit();
    clock.now += 1000;
    capacity.admit();
    expect(capacity.stats().perSecond).toEqual([
      { second: 1000, admitted: 2, refused: 1 },
      { second: 1001, admitted: 1, refused: 0 },
    ]);
  });
});

describe("a simulator with a capacity, over HTTP", () => {
  it("when over capacity, then it answers 429 with Retry-After and no effect, and /__sim/capacity changes the limit while it runs", async () => {
    const sim = await start({ capacity: { ...LIMIT, ratePerSec: 0.5, burst: 1 } });
    expect((await submit(sim)).status).toBe(201);
    const refused = await submit(sim);
    expect(refused.status).toBe(429);
    expect(header(refused, "retry-after")).toBe("2");
    expect(problemOf(refused).type).toMatch(/over-capacity$/);

    const changed = await send(
      `${sim.url}/__sim/capacity`,
      "POST",
      { "content-type": "application/json" },
      '{"ratePerSec":1000,"burst":5}',
    );
    expect(json(changed)).toMatchObject({ capacity: { ratePerSec: 1000, burst: 5 } });
    // the bucket keeps its tokens across a change (it was empty): the new rate refills one a millisecond
    await delay(5);
    expect((await submit(sim)).status).toBe(201);

    const stats = simulatorStatsSchema.parse(json(await send(`${sim.url}/__sim/stats`, "GET")));
    expect(stats.effects.total).toBe(2);
    expect(stats.capacity).toMatchObject({ admitted: 2, refused: 1 });
    expect(stats.capacity.perSecond.reduce((n, s) => n + s.refused, 0)).toBe(1);

    const bad = await send(
      `${sim.url}/__sim/capacity`,
      "POST",
      { "content-type": "application/json" },
      '{"burst":-1}',
    );
    expect(bad.status).toBe(422);
    const off = await send(
      `${sim.url}/__sim/capacity`,
      "POST",
      { "content-type": "application/json" },
      "null",
    );
    expect(z.object({ capacity: z.null() }).parse(json(off)).capacity).toBeNull();
  });

  it("when reset, then the capacity given at start is back and nothing is counted", async () => {
    const sim = await start({ capacity: { ...LIMIT, burst: 1 } });
    sim.setCapacity(null);
    await submit(sim);
    sim.reset();
    expect(sim.capacity()).toEqual({ ...LIMIT, burst: 1 });
    expect(sim.stats().capacity).toMatchObject({ admitted: 0, refused: 0, perSecond: [] });
  });
});
