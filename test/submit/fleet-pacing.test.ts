import { describe, expect, it } from "vitest";
import { modelNight, type NightOutcome } from "../../src/dev/fleet-model/night.js";
import { DEFAULT_RATE_SETTINGS, rateAt, type RateState } from "../../src/submit/send-rate.js";

/** The learned rate's states as written, parsed, with their time from the first request. */
function states(night: NightOutcome): { t: number; state: RateState }[] {
  return night.states.map((s) => ({ t: s.at - night.startedAt, state: JSON.parse(s.state) as RateState }));
}

/** The fleet's learned rate at `t` ms after the first request (the newest state written by then). */
function rateOf(night: NightOutcome, t: number): number {
  const written = states(night).filter((s) => s.t <= t);
  const last = written.at(-1);
  if (last === undefined) return DEFAULT_RATE_SETTINGS.startRate;
  return rateAt(last.state, night.startedAt + t, DEFAULT_RATE_SETTINGS);
}

/** Requests admitted in the 100 ms slices from `fromMs` to `toMs` after the first request, per second. */
function admittedPerSec(night: NightOutcome, fromMs: number, toMs: number): number {
  const slices = night.tenths.slice(fromMs / 100, toMs / 100);
  return (slices.reduce((sum, s) => sum + s.admitted, 0) * 1000) / (toMs - fromMs);
}

// The fleet model runs the relay's own pacers (src/submit/send-pacer.ts) for three processes against the
// simulator's capacity model on virtual time (src/dev/fleet-model): these are behaviours of the controller,
// not timings of this machine.
describe("three processes sharing one learned rate, on virtual time", () => {
  it("when the capacity drops to a third and comes back, then every invoice is routed, the learned rate goes down after the drop and up after the rise, and few requests are refused", async () => {
    const night = await modelNight({
      processes: 3,
      invoices: 6000,
      capacity: 300,
      seed: 1,
      changes: [
        { atMs: 8000, patch: { ratePerSec: 100, burst: 10 } },
        { atMs: 16_000, patch: { ratePerSec: 300, burst: 30 } },
      ],
    });
    expect(night.routed).toBe(6000);
    expect(rateOf(night, 7900)).toBeGreaterThan(250);
    expect(rateOf(night, 9000)).toBeLessThan(120); // within a second of the drop
    expect(rateOf(night, 15_900)).toBeLessThan(130);
    expect(admittedPerSec(night, 20_000, 22_000)).toBeGreaterThan(240); // within four seconds of the rise
    expect(night.refused / 6000).toBeLessThan(0.1);
    // the capacity estimated at each cut is what the service let through, give or take a fifth
    const cuts = states(night).filter((s) => s.state.cutAt === s.state.at);
    expect(cuts.length).toBeGreaterThan(3);
    for (const { t, state } of cuts) {
      const capacity = t >= 8000 && t < 16_000 ? 100 : 300;
      if (t > 1000 && Math.abs(t - 8000) > 300 && Math.abs(t - 16_000) > 300)
        expect(state.estimates?.at(-1) ?? 0).toBeGreaterThan(0.8 * capacity);
    }
  });

  it("when the fleet sends past the capacity after the first probe, then it is never over it by more than the burst for longer than a second", async () => {
    const night = await modelNight({ processes: 3, invoices: 6000, capacity: 300, seed: 2 });
    // the fleet's rate in each tenth of a second, from 2 s on: above 330/s now and then, never a second long
    let longest = 0;
    let run = 0;
    for (const t of night.tenths.slice(20)) {
      run = (t.admitted + t.refused) * 10 > 300 + 30 ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeLessThan(10);
    expect(night.refused).toBeGreaterThan(0); // it did go past the capacity: the probe is judged
  });

  it("when the service also refuses 5 % at random, as the chaos suite's does, then the fleet is not cut again and again: it keeps sending near the capacity", async () => {
    const night = await modelNight({ processes: 3, invoices: 6000, capacity: 300, seed: 3, random429: 0.05 });
    expect(night.routed).toBe(6000);
    expect(admittedPerSec(night, 3000, 15_000)).toBeGreaterThan(0.8 * 300);
  });

  it("when SUBMIT_RATE_PER_SEC is set below the capacity, then the fleet never sends faster than it", async () => {
    const night = await modelNight({
      processes: 3,
      invoices: 1500,
      capacity: 300,
      seed: 4,
      settings: { ceiling: 150 },
    });
    expect(night.routed).toBe(1500);
    expect(night.refused).toBe(0);
    for (let from = 0; from + 1000 <= night.tenths.length * 100; from += 500)
      expect(admittedPerSec(night, from, from + 1000)).toBeLessThanOrEqual(150 + 5);
  });

  it("when the service refuses everything for a while (a quota spent), then the fleet backs off to a trickle and holds for its Retry-After, and goes on once it accepts again", async () => {
    const night = await modelNight({
      processes: 3,
      invoices: 3000,
      capacity: 300,
      seed: 5,
      changes: [
        { atMs: 2000, patch: { ratePerSec: 0 } },
        { atMs: 70_000, patch: { ratePerSec: 300 } },
      ],
    });
    expect(night.routed).toBe(3000);
    const refusedWhileSpent = night.tenths.slice(30, 690).reduce((sum, t) => sum + t.refused, 0);
    expect(refusedWhileSpent).toBeLessThan(300); // not hundreds a second for a minute: a few, then a hold
    const held = states(night).some((s) => s.state.refusingSince > 0);
    expect(held).toBe(true);
  });
});
