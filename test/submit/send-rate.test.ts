import { describe, expect, it } from "vitest";
import { LatencyFloor } from "../../src/submit/latency-floor.js";
import { mulberry32 } from "../../src/simulator/prng.js";
import {
  DEFAULT_RATE_SETTINGS,
  concurrencyFor,
  initialRateState,
  onAccepted,
  capacityOf,
  onCongested,
  onProbeReached,
  onRefusedPastPlateau,
  onResume,
  onThrottled,
  phaseAt,
  rateAt,
  spacingMs,
  type RateSettings,
  type RateState,
} from "../../src/submit/send-rate.js";

const T0 = 1_800_000_000_000;
const S: RateSettings = {
  ...DEFAULT_RATE_SETTINGS,
  startRate: 100,
  beta: 0.9,
  probeDoublingMs: 250,
  recoverMs: 1000,
  cutGuardMs: 100,
};
/** Just cut, at T0, with the capacity estimated at 300 requests/s. */
const cutAt300: RateState = {
  version: 3,
  rate: 270,
  at: T0,
  max: 300,
  refusingSince: 0,
  estimates: [300],
  cutAt: T0,
};

describe("the learned sending rate", () => {
  it("when nothing is learned yet, then it starts at the starting rate and doubles every probe interval", () => {
    const state = initialRateState(S, T0);
    expect(rateAt(state, T0, S)).toBe(100);
    expect(rateAt(state, T0 + 250, S)).toBeCloseTo(200);
    expect(rateAt(state, T0 + 1000, S)).toBeCloseTo(1600);
    expect(phaseAt(state, T0 + 1000, 0, S)).toBe("probing");
  });

  it("when a starting rate is set, then probing starts there", () => {
    expect(rateAt(initialRateState({ ...S, startRate: 40 }, T0), T0, { ...S, startRate: 40 })).toBe(40);
  });

  it("when the service is over capacity, then the rate goes to beta of what it was seen to let through, which becomes the plateau", () => {
    const probing = initialRateState(S, T0);
    const cut = onThrottled(probing, T0 + 500, S, undefined, 300);
    expect(cut).toMatchObject({
      version: 1,
      at: T0 + 500,
      max: 300,
      refusingSince: T0 + 500,
      cutAt: T0 + 500,
    });
    expect(cut?.estimates).toEqual([300]);
    expect(cut?.rate).toBeCloseTo(270);
    expect(rateAt(cut ?? probing, T0 + 500, S)).toBeCloseTo(270);
    expect(phaseAt(cut ?? probing, T0 + 600, 0, S)).toBe("backing-off");
  });

  it("when the capacity seen is more than the fleet sent, or nothing was seen, then the cut starts from what was sent, and never takes more than 70 % off", () => {
    const probing = initialRateState(S, T0); // 400/s at T0 + 500
    expect(onThrottled(probing, T0 + 500, S, undefined, 900)?.max).toBeCloseTo(400);
    expect(onThrottled(probing, T0 + 500, S, undefined, 10)?.max).toBeCloseTo(120);
    expect(onThrottled(probing, T0 + 500, S)?.max).toBeCloseTo(120);
  });

  it("when more 429s come within the guard after a cut, then the rate is not cut again", () => {
    const refusing = { ...cutAt300, refusingSince: T0 };
    expect(onThrottled(refusing, T0 + S.cutGuardMs - 1, S, undefined, 250)).toBeUndefined();
    expect(onThrottled(refusing, T0 + S.cutGuardMs, S, undefined, 250)?.version).toBe(4);
  });

  it("when estimates agree, then the plateau is their median; one that says the capacity changed counts alone", () => {
    const second = onThrottled(cutAt300, T0 + 3000, S, undefined, 330) ?? cutAt300;
    expect(second.estimates).toEqual([300, 330]);
    expect(second.max).toBeCloseTo(315);
    const third = onThrottled(second, T0 + 6000, S, undefined, 280) ?? second;
    expect(third.estimates).toEqual([300, 330, 280]);
    expect(third.max).toBeCloseTo(300);
    expect(third.rate).toBeCloseTo(0.9 * 280); // never above the newest estimate right after a cut
    const dropped = onThrottled(third, T0 + 9000, S, 150, 100) ?? third; // the fleet sent 150/s lately
    expect(dropped.estimates).toEqual([100]);
    expect(dropped.max).toBeCloseTo(100);
    expect(capacityOf(dropped)).toBeCloseTo(100);
  });

  it("when answers stay good after a cut, then the rate climbs back to the plateau in recoverMs, flattens, then rises ever faster", () => {
    const at = (ms: number) => rateAt(cutAt300, T0 + ms, S);
    expect(at(0)).toBeCloseTo(270);
    expect(at(500)).toBeGreaterThan(270);
    expect(at(1000)).toBeCloseTo(300);
    const nearPlateau = at(1100) - at(900);
    const early = at(200) - at(0);
    const late = at(3000) - at(2800);
    expect(nearPlateau).toBeLessThan(early);
    expect(nearPlateau).toBeLessThan(late);
    expect(at(2000)).toBeCloseTo(330);
    expect(at(4000)).toBeCloseTo(300 * 3.7); // a capacity that tripled is found in under four recoveries
    expect(phaseAt(cutAt300, T0 + 1500, 0, S)).toBe("holding");
    expect(phaseAt(cutAt300, T0 + 2100, 0, S)).toBe("probing");
  });

  it("when the fleet is refused past the plateau, then the rate goes back to the capacity estimated, unless it is far above it", () => {
    const probingOn = { ...cutAt300, max: 300 };
    const back = onRefusedPastPlateau(probingOn, T0 + 2000, S);
    expect(back).toMatchObject({ rate: 300, max: 300, at: T0 + 1000, returnedAt: T0 + 2000 });
    expect(rateAt(back ?? probingOn, T0 + 2000, S)).toBeCloseTo(300);
    expect(onRefusedPastPlateau(probingOn, T0 + 900, S)).toBeUndefined(); // still recovering: under it
    expect(onRefusedPastPlateau(probingOn, T0 + 4000, S)).toBeUndefined(); // 3.7 × it: a capacity that rose
    expect(onRefusedPastPlateau(initialRateState(S, T0), T0 + 2000, S)).toBeUndefined(); // nothing known
  });

  it("when SUBMIT_RATE_PER_SEC is set, then the rate never exceeds it, probing or after a cut", () => {
    const capped = { ...S, ceiling: 150 };
    expect(rateAt(initialRateState(capped, T0), T0 + 10_000, capped)).toBe(150);
    expect(rateAt(cutAt300, T0 + 1000, capped)).toBe(150);
    expect(onThrottled(initialRateState(capped, T0), T0 + 5000, capped, undefined, 400)?.max).toBe(150);
  });

  it("when the fleet sends less than the rate, then the rate stays within twice what it sent", () => {
    const state = initialRateState(S, T0);
    expect(rateAt(state, T0 + 5000, S, 150)).toBe(300);
    expect(rateAt(state, T0 + 5000, S, 10)).toBe(100); // never below the starting rate for that
  });

  it("when a Retry-After holds the fleet, then the phase is backing off until it ends", () => {
    expect(phaseAt(cutAt300, T0 + 1500, T0 + 5000, S)).toBe("backing-off");
    expect(phaseAt(cutAt300, T0 + 5000, T0 + 5000, S)).toBe("probing");
  });

  it("when the rate is known, then requests are spaced evenly at 1000/rate ms", () => {
    expect(spacingMs(300)).toBeCloseTo(3.333);
    expect(spacingMs(0.5)).toBe(2000);
  });

  it("when the service refuses and later accepts, then refusingSince is set at the first refusal and cleared by an acceptance", () => {
    const refused = onThrottled(cutAt300, T0 + 50, S, undefined, 250);
    expect(refused).toMatchObject({ refusingSince: T0 + 50, rate: 270, max: 300 }); // no cut in the guard
    const still = onThrottled(refused ?? cutAt300, T0 + 1000, S, undefined, 250);
    expect(still?.refusingSince).toBe(T0 + 50);
    expect(onAccepted(still ?? cutAt300)?.refusingSince).toBe(0);
    expect(onAccepted(cutAt300)).toBeUndefined();
  });

  it("when refusals go on, then the rate falls to the floor and stays there", () => {
    let state: RateState = cutAt300;
    for (let t = 1; t <= 60; t++) state = onThrottled(state, T0 + t * 1000, S, undefined, 0) ?? state;
    expect(state.estimates?.length).toBeLessThanOrEqual(3);
    expect(rateAt(state, T0 + 60_000, S)).toBe(S.minRate);
  });

  it("when latency rises well above its floor while probing well past the capacity, then the curve plateaus a little under the rate then and rises slowly from there", () => {
    const beyond = T0 + 3000; // 2.6 × the capacity estimated
    const slowed = onCongested(cutAt300, beyond, S);
    const state = slowed ?? cutAt300;
    expect(slowed?.max).toBeCloseTo(0.9 * rateAt(cutAt300, beyond, S)); // a little under: latency lags the load
    expect(slowed?.estimates).toEqual([300]); // the capacity estimated stays what the cuts saw
    expect(rateAt(state, beyond + 500, S)).toBeLessThan(rateAt(cutAt300, beyond + 500, S) / 1.2);
    expect(onCongested(cutAt300, T0 + 500, S)).toBeUndefined(); // on the cubic: under the capacity
    expect(onCongested(cutAt300, T0 + 1500, S)).toBeUndefined(); // near the capacity latency is high anyway
    // the first probe, before any capacity was seen, is not slowed: latency then rises with our own load too
    expect(onCongested(initialRateState(S, T0), T0 + 500, S)).toBeUndefined();
  });

  it("when a pass starts after a pause, then it resumes a little below the last learned rate and probes back to it", () => {
    const learned: RateState = { ...cutAt300, at: T0 - 3_600_000 };
    const resumed = onResume(learned, T0 - 3_500_000, T0, S);
    expect(resumed).toMatchObject({ at: T0, max: 300, estimates: [300] });
    expect(rateAt(resumed ?? learned, T0, S)).toBeCloseTo(270);
    expect(rateAt(resumed ?? learned, T0 + S.recoverMs, S)).toBeCloseTo(300);
    expect(onResume(learned, T0 - 1000, T0, S)).toBeUndefined(); // sent a second ago: no pause
    expect(onResume(learned, 0, T0, S)).toBeUndefined(); // never sent: nothing learned
  });

  it("when a probe from nothing reaches twice the rate last noted, then the rate reached is noted, and the probe goes on as it was", () => {
    const probing = initialRateState(S, T0);
    expect(onProbeReached(probing, 150, S)).toBeUndefined(); // not twice 100 yet
    const noted = onProbeReached(probing, 4000, S);
    expect(noted).toMatchObject({ version: probing.version + 1, rate: 100, at: T0, max: 0, reached: 4000 });
    expect(rateAt(noted ?? probing, T0 + 500, S, 3000)).toBe(rateAt(probing, T0 + 500, S, 3000));
    expect(onProbeReached(noted ?? probing, 6000, S)).toBeUndefined(); // not twice 4,000
    // once a capacity is known, or while the service refuses, nothing is noted
    expect(onProbeReached(cutAt300, 5000, S)).toBeUndefined();
    expect(onProbeReached({ ...probing, refusingSince: T0 }, 4000, S)).toBeUndefined();
  });

  it("when a fleet that never met a limit starts after a pause, then it probes on from a little below the rate it last reached, not from the start", () => {
    const reached: RateState = { ...initialRateState(S, T0 - 3_600_000), reached: 4000 };
    const resumed = onResume(reached, T0 - 3_500_000, T0, S);
    expect(resumed).toMatchObject({ at: T0, max: 0 });
    expect(rateAt(resumed ?? reached, T0, S, 0)).toBeCloseTo(3600);
    // still probing: it doubles on
    expect(rateAt(resumed ?? reached, T0 + S.probeDoublingMs, S)).toBeCloseTo(7200);
  });

  it("when concurrency follows rate × latency, then it is twice Little's law plus one, within [1, max]", () => {
    expect(concurrencyFor(300, 40, 32)).toBe(25);
    expect(concurrencyFor(300, 400, 32)).toBe(32);
    expect(concurrencyFor(1, 1, 32)).toBe(2);
  });
});

describe("the latency floor", () => {
  it("when answers slow to well above their usual latency, then it says so; a window later the floor follows", () => {
    const floor = new LatencyFloor(T0, 10_000);
    for (let i = 0; i < 50; i++) expect(floor.observe(20, T0 + i)).toBe(false);
    let congested = false;
    for (let i = 1; i <= 30; i++) congested = floor.observe(80, T0 + 50 + i);
    expect(congested).toBe(true);
    expect(floor.floor).toBe(20);
    for (let i = 0; i < 5; i++) floor.observe(80, T0 + 10_000 + i);
    for (let i = 0; i < 5; i++) floor.observe(80, T0 + 20_000 + i);
    expect(floor.floor).toBeGreaterThan(60);
    expect(floor.observe(80, T0 + 20_010)).toBe(false);
  });

  it("when latency is spread widely at random (0 to 50 ms) but no higher on average, then it never says congested", () => {
    const floor = new LatencyFloor(T0, 10_000);
    const random = mulberry32(8);
    const congested = Array.from({ length: 5000 }, (_, i) => floor.observe(50 * random(), T0 + i * 5));
    expect(congested.filter(Boolean)).toEqual([]);
    // and when the same service then queues (its answers 60 ms slower), it does
    const queued = Array.from({ length: 100 }, (_, i) => floor.observe(60 + 50 * random(), T0 + 25_000 + i));
    expect(queued.at(-1)).toBe(true);
  });
});
