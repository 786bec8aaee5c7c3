import { describe, expect, it } from "vitest";
import {
  BETA,
  FEEDBACKS,
  CAUTIOUS_GROWTH,
  IDLE_MS,
  MIN_RATE,
  RECOVER_MS,
  concurrencyFor,
  onAccepted,
  onProbed,
  onRefused,
  onResume,
  parseRateState,
  pastChance,
  phaseAt,
  rateAt,
  startState,
  type Fleet,
  type RateSettings,
  type RateState,
} from "../../src/capacity/rate.js";

const T = 1_800_000_000_000;
const SETTINGS: RateSettings = { ceiling: 0, startRate: 100, retryAfterCapMs: 60_000 };
/** The fleet's answers lately and in all. */
const fleet = (acceptedPerSec: number, refusedPerSec = 0, accepted = 0, refused = 0): Fleet => ({
  acceptedPerSec,
  refusedPerSec,
  accepted,
  refused,
});
const NONE = { accepted: 0, refused: 0 };
/** A refusal for capacity without Retry-After of a request sent at `at`. */
const refusedAt = (at: number) => ({ sentAt: at, wentAt: at, retryAfterMs: 0, roundTripMs: 0 });
const learned = (over: Partial<RateState> = {}): RateState => ({
  ...startState(SETTINGS, T, NONE),
  rate: 270,
  max: 300,
  ...over,
});

describe("the learned rate, on a fake clock", () => {
  it("when nothing is learned yet, then the rate is twice what the service accepted lately (slow start), never below the start rate", () => {
    const state = startState(SETTINGS, T, NONE);
    expect(rateAt(state, T, SETTINGS, fleet(0))).toBe(100);
    expect(rateAt(state, T + 60_000, SETTINGS, fleet(0))).toBe(100);
    expect(rateAt(state, T, SETTINGS, fleet(400))).toBe(800);
  });

  it("when a cut happened, then the rate climbs back to the plateau within K and probes past it ever faster (CUBIC), never above twice what was accepted", () => {
    const state = learned({ at: T, rate: BETA * 300 });
    const busy = fleet(1000);
    expect(rateAt(state, T, SETTINGS, busy)).toBeCloseTo(270);
    const half = rateAt(state, T + RECOVER_MS / 2, SETTINGS, busy);
    expect(half).toBeGreaterThan(290);
    expect(half).toBeLessThan(300);
    expect(rateAt(state, T + RECOVER_MS, SETTINGS, busy)).toBeCloseTo(300);
    expect(rateAt(state, T + 3 * RECOVER_MS, SETTINGS, busy)).toBeCloseTo(300 * (1 + (1 - BETA) * 8));
    expect(rateAt(state, T + 3 * RECOVER_MS, SETTINGS, fleet(200))).toBe(400);
  });

  it("when SUBMIT_RATE_PER_SEC is set, then the rate never exceeds it", () => {
    const capped = { ...SETTINGS, ceiling: 50 };
    expect(rateAt(startState(capped, T, NONE), T, capped, fleet(400))).toBe(50);
  });

  it("when refusals are more than chance, then the rate goes to β of what the service accepted, which becomes the plateau", () => {
    const state = { ...startState(SETTINGS, T, NONE), rate: 1000 }; // slow start saw 1,000/s accepted
    const cut = onRefused(state, refusedAt(T + 500), fleet(1000, 900), T + 600, SETTINGS);
    expect(cut?.holdMs).toBe(0);
    // 250 accepted in the quarter second: 249 per quarter at least (the first may open it, the last close it)
    expect(cut?.state).toMatchObject({ max: 996, rate: BETA * 996, at: T + 600, version: 1 });
  });

  it("when slow start ends, then the cut goes no higher than β of the rate it last saw accepted (the quarter second it measured may end with a bucket's burst), nor under β of half the accepted rate", () => {
    // noted at 800/s; then 1,250/s accepted lately, a burst drained at twice the rate in it
    const state = { ...startState(SETTINGS, T, NONE), rate: 800 };
    const cut = onRefused(state, refusedAt(T + 500), fleet(1250, 600), T + 600, SETTINGS);
    expect(cut?.state).toMatchObject({ rate: BETA * 800, max: 1246, threshold: 1246 });
    // nor under half the accepted rate: a state replaced mid-night (the start rate), a hold's probe (the floor)
    for (const rate of [100, MIN_RATE]) {
      const fresh = { ...startState(SETTINGS, T, NONE), rate };
      const reset = onRefused(fresh, refusedAt(T + 500), fleet(2000, 1000), T + 600, SETTINGS);
      expect(reset?.state).toMatchObject({ rate: BETA * 998, max: 1996 });
    }
    // with a plateau, the cut is β of what was accepted whatever the stored rate
    const after = learned({ rate: 100, max: 1300, at: T - 5000 });
    const curveCut = onRefused(after, refusedAt(T + 500), fleet(1250, 600, 10_000, 500), T + 600, SETTINGS);
    expect(curveCut?.state.rate).toBeCloseTo(BETA * 1246);
  });

  it("when a cut comes before the curve is back at its plateau, then the state counts it under (refused at a rate the service accepted); one after, only as a cut; a resumed pass counts from none", () => {
    const state = learned({ at: T, cuts: 3, under: 1 });
    const soon = onRefused(state, refusedAt(T + 500), fleet(250, 100), T + RECOVER_MS / 2, SETTINGS);
    expect(soon?.state).toMatchObject({ cuts: 4, under: 2 });
    const back = onRefused(state, refusedAt(T + 1500), fleet(250, 100), T + RECOVER_MS + 1, SETTINGS);
    expect(back?.state).toMatchObject({ cuts: 4, under: 1 });
    const resumed = onResume(state, T + 5000, T + 5000 + IDLE_MS, fleet(0), SETTINGS);
    expect(resumed).toMatchObject({ cuts: 0, under: 0 });
    // a state stored before they were counted reads as none
    const older = JSON.stringify(state).replace(/,"cuts":3,"under":1/, "");
    expect(older).not.toContain("cuts");
    expect(parseRateState(older, T)).toMatchObject({ cuts: 0, under: 0 });
  });

  it("when a refused request was sent before the last cut, then it cuts nothing more: once per round trip", () => {
    const state = learned({ at: T + 1000 });
    expect(onRefused(state, refusedAt(T + 999), fleet(300, 300), T + 1100, SETTINGS)).toBeUndefined();
    expect(onRefused(state, refusedAt(T + 1000), fleet(300, 300), T + 1100, SETTINGS)).toBeDefined();
  });

  it("when refusals are no more than chance would give (5 % at random), then they cut nothing", () => {
    // about 300 answers a second, 15 refused
    expect(pastChance(fleet(285, 15))).toBe(false);
    expect(pastChance(fleet(4, 4))).toBe(false); // one of one
    expect(pastChance(fleet(0, 8))).toBe(true); // two of two
    expect(pastChance(fleet(250, 50))).toBe(true);
    expect(pastChance(fleet(30_000, 3000))).toBe(false);
    expect(pastChance(fleet(30_000, 4000))).toBe(true);
    expect(onRefused(learned(), refusedAt(T + 10), fleet(285, 15), T + 20, SETTINGS)).toBeUndefined();
  });

  it("when the service refuses everything, then it teaches no plateau: the last one stays, the rate goes to the floor, and the first request it accepts again starts slow start a cut below that plateau, cautious past it", () => {
    const state = learned({ at: T, rate: 300, max: 300 });
    const cut = onRefused(state, refusedAt(T + 2000), fleet(0, 40, 0, 40), T + 2000, SETTINGS);
    expect(cut?.state.max).toBe(300);
    expect(cut?.state.refusingSince).toBe(T + 2000);
    expect(cut?.state.rate).toBe(MIN_RATE);
    const refusing = cut?.state ?? state;
    // an answer to a request sent before the refusals began says nothing of now
    expect(onAccepted(refusing, [T + 1999, T + 9000], NONE, SETTINGS)).toBeUndefined();
    const back = onAccepted(refusing, [T + 8000, T + 9000], { accepted: 7, refused: 90 }, SETTINGS);
    expect(back).toMatchObject({ refusingSince: 0, rate: BETA * 300, max: 0, threshold: 300, at: T + 9000 });
    expect(back?.atAccepted).toBe(7);
    // slow start doubles up to that plateau, then grows a quarter at a time (the service limited it there)
    const returned = back ?? state;
    expect(rateAt(returned, T + 9100, SETTINGS, fleet(140))).toBe(280);
    // doubling 200 would send a third past that plateau: it stops at the plateau
    expect(rateAt(returned, T + 9150, SETTINGS, fleet(200))).toBe(300);
    expect(rateAt(returned, T + 9200, SETTINGS, fleet(320))).toBe(CAUTIOUS_GROWTH * 320);
    expect(onAccepted(state, [T + 8000, T + 9000], NONE, SETTINGS)).toBeUndefined();
  });

  it("when the service fails over several round trips before it refuses everything, then their cuts lower the plateau the return starts from, not the threshold its slow start doubles up to", () => {
    const steady = learned({ at: T, rate: 900, max: 1000, threshold: 1000 });
    // past K: the curve got back to its plateau, so this cut measured the capacity
    const first = onRefused(steady, refusedAt(T + 1990), fleet(1000, 200, 2000, 50), T + 2000, SETTINGS);
    const measured = first?.state.max ?? 0;
    expect(measured).toBeGreaterThan(900);
    expect(first?.state.threshold).toBe(measured);
    // a round trip later, a fifth accepted: a service failing, not a capacity the return should stop at
    const failing = first?.state ?? steady;
    const second = onRefused(failing, refusedAt(T + 2300), fleet(200, 800, 2060, 250), T + 2300, SETTINGS);
    expect(second?.state.max).toBeLessThan(200);
    expect(second?.state.threshold).toBe(measured);
    const dark = second?.state ?? steady;
    const third = onRefused(dark, refusedAt(T + 2600), fleet(0, 800, 2060, 450), T + 2600, SETTINGS);
    expect(third?.state).toMatchObject({ refusingSince: T + 2600, threshold: measured, rate: MIN_RATE });
    // refusals that speak while it refuses everything measure nothing, however long after the last cut
    const asked = onRefused(
      third?.state ?? steady,
      refusedAt(T + 8000),
      fleet(0, 8, 2060, 460),
      T + 8000,
      SETTINGS,
    );
    expect(asked?.state).toMatchObject({ threshold: measured, max: second?.state.max });
    const lowered = second?.state.max ?? 0;
    const back = onAccepted(asked?.state ?? steady, [T + 9000, T + 9010], NONE, SETTINGS);
    expect(back).toMatchObject({ rate: BETA * lowered, max: 0, threshold: measured });
    // slow start from low (as TCP after a timeout), doubling up to the plateau measured before
    const returned = back ?? steady;
    expect(rateAt(returned, T + 9300, SETTINGS, fleet(300))).toBe(600);
    expect(rateAt(returned, T + 9600, SETTINGS, fleet(900))).toBe(CAUTIOUS_GROWTH * 900);
    // a cut out of that slow start (the service failing again, or back lower) leaves the threshold
    const again = onRefused(returned, refusedAt(T + 9700), fleet(300, 300, 2400, 760), T + 9700, SETTINGS);
    expect(again?.state.max).toBeLessThan(measured);
    expect(again?.state.threshold).toBe(measured);
  });

  it("when the service refuses everything at a rate too low for two refusals in a quarter second, then the refusals since the last event show it, and the next accepted answer starts a return", () => {
    const slow = learned({ at: T, rate: 4, max: 5, threshold: 300, atAccepted: 100, atRefused: 10 });
    // lately one refusal of one answer: no more than chance; since the last cut, three of three
    const cut = onRefused(slow, refusedAt(T + 900), fleet(0, 4, 100, 13), T + 1000, SETTINGS);
    expect(cut?.state).toMatchObject({ refusingSince: T + 1000, rate: MIN_RATE, threshold: 300 });
    expect(onAccepted(cut?.state ?? slow, [T + 3000, T + 3040], NONE, SETTINGS)).toMatchObject({
      refusingSince: 0,
      threshold: 300,
    });
    // one refusal since the last event does not speak either
    expect(onRefused(slow, refusedAt(T + 900), fleet(0, 4, 100, 11), T + 1000, SETTINGS)).toBeUndefined();
  });

  it("when it accepts a few but fewer than chance would refuse, then it still refuses everything; more, and it does not", () => {
    const state = learned({ at: T, rate: 300, max: 300 });
    const few = onRefused(state, refusedAt(T + 10), fleet(20, 250, 9, 100), T + 20, SETTINGS);
    expect(few?.state.refusingSince).toBe(T + 20);
    const third = onRefused(state, refusedAt(T + 10), fleet(100, 150, 40, 60), T + 20, SETTINGS);
    expect(third?.state.refusingSince).toBe(0);
    expect(third?.state.max).toBe(96); // 25 in the quarter second: 24 at least
  });

  it("when refusals ask a wait while the service still accepts most requests, then the wait is the refused request's own: a cut, never a hold of the fleet", () => {
    // a bucket crossed, every refusal with Retry-After: 1 (or 60): the service accepts 300/s meanwhile
    for (const retryAfterMs of [1000, 60_000]) {
      const cut = onRefused(
        learned(),
        { ...refusedAt(T + 10), retryAfterMs },
        fleet(300, 60, 1000, 100),
        T + 20,
        SETTINGS,
      );
      expect(cut?.holdMs).toBe(0);
      expect(cut?.state.rate).toBeLessThan(300);
    }
    // as many refused at random, asking to wait, and nothing else: chance, nothing at all
    const random = fleet(285, 15, 1000, 50);
    expect(
      onRefused(learned(), { ...refusedAt(T + 10), retryAfterMs: 1000 }, random, T + 20, SETTINGS),
    ).toBeUndefined();
  });

  it("when the service refuses everything since the last event and asks a wait, then the fleet holds for the least wait asked (within the cap), at once for a request sent since the event; with nothing accepted over the cycle, it then sends at the floor until one is accepted", () => {
    const cutAt = learned({ at: T, atAccepted: 100, atRefused: 0, markAt: T - 5000, markAccepted: 100 });
    const dark = fleet(0, 8, 100, 10);
    // sent 250 ms before the cut by the margin a cut waits for, but went 50 ms after it
    const refusal = { sentAt: T - 200, wentAt: T + 50, retryAfterMs: 45_000, roundTripMs: 0 };
    const held = onRefused(cutAt, refusal, dark, T + 100, SETTINGS);
    expect(held?.holdMs).toBe(45_000);
    expect(held?.state).toMatchObject({ rate: MIN_RATE, max: 300, at: T + 45_100, refusingSince: T + 100 });
    // a state dated at the hold's end is one a pacer wrote
    expect(parseRateState(JSON.stringify(held?.state), T + 100, T + 45_100)).toEqual(held?.state);
    expect(onRefused(cutAt, { ...refusal, retryAfterMs: 3_600_000 }, dark, T + 100, SETTINGS)?.holdMs).toBe(
      60_000,
    );
    // refusing everything without a wait asked: a cut to the floor a round trip on, no hold
    expect(onRefused(cutAt, { ...refusal, retryAfterMs: 0 }, dark, T + 400, SETTINGS)).toBeUndefined();
    const later = { sentAt: T + 300, wentAt: T + 350, retryAfterMs: 0, roundTripMs: 0 };
    expect(onRefused(cutAt, later, dark, T + 400, SETTINGS)).toMatchObject({
      holdMs: 0,
      state: { rate: MIN_RATE },
    });
  });

  it("when a hold ends a cycle in which the service accepted some (a quota window: 300 in 15 s, then a wait of 45 s), then the fleet goes on at the cycle's long-run rate, 5/s, and probes past it on the cycle's time scale", () => {
    const cycle = learned({ markAt: T, markAccepted: 100, at: T + 14_000, atAccepted: 400, atRefused: 0 });
    const refusal = { sentAt: T + 14_500, wentAt: T + 14_500, retryAfterMs: 45_000, roundTripMs: 0 };
    const held = onRefused(cycle, refusal, fleet(0, 8, 400, 10), T + 15_000, SETTINGS);
    expect(held?.holdMs).toBe(45_000);
    expect(held?.state).toMatchObject({ rate: 5, max: 5, threshold: 5, refusingSince: 0, k: 60_000 });
    expect(held?.state).toMatchObject({ at: T + 60_000, markAt: T + 60_000, markAccepted: 400 });
    // a cycle faster than the plateau last measured (the capacity dropped since): the plateau
    const dropped = learned({ markAt: T, markAccepted: 0, max: 2, at: T + 14_000, atAccepted: 400 });
    expect(onRefused(dropped, refusal, fleet(0, 8, 400, 10), T + 15_000, SETTINGS)?.state).toMatchObject({
      rate: 2,
      max: 2,
    });
  });

  it("when cutting, then the plateau is the lower of the accepted rate lately and since the last cut, each the least its count allows: a quarter second holds a bucket's burst, the time since the cut its long-run rate", () => {
    // 1,001 accepted over the 4 s since the last cut (250/s at least); 300/s lately, a burst drained among them
    const state = learned({ at: T, atAccepted: 0 });
    const refusal = refusedAt(T + 3900);
    const burst = onRefused(state, refusal, fleet(300, 100, 1001, 30), T + 4000, SETTINGS);
    expect(burst?.state.max).toBe(250);
    expect(burst?.state.rate).toBe(BETA * 250);
    // the capacity fell: 101/s lately (25.25 in the quarter second, 24.25 at least) is below the rate since the cut
    const fell = onRefused(state, refusal, fleet(101, 100, 1001, 30), T + 4000, SETTINGS);
    expect(fell?.state.max).toBe(97);
    // 12 paced requests in a quarter second show 11 per quarter at least: 44/s, not 48/s
    const paced = onRefused(state, refusal, fleet(48, 48, 1001, 30), T + 4000, SETTINGS);
    expect(paced?.state.max).toBe(44);
    // 4 in the quarter second: one less would be more than a cut takes; β of them, 14.4/s
    const few = onRefused(state, refusal, fleet(16, 40, 1001, 30), T + 4000, SETTINGS);
    expect(few?.state.max).toBeCloseTo(BETA * 16);
    // 41 over the 4 s since the cut: 10/s at least
    const slow = onRefused(state, refusal, fleet(40, 40, 41, 30), T + 4000, SETTINGS);
    expect(slow?.state.max).toBe(10);
  });

  it("when slow start reaches twice the stored rate, then it is noted, so a pass after a pause starts from it", () => {
    const state = startState(SETTINGS, T, NONE);
    expect(onProbed(state, fleet(150), SETTINGS)).toBeUndefined();
    expect(onProbed(state, fleet(400), SETTINGS)?.rate).toBe(400);
    expect(onProbed(learned(), fleet(4000), SETTINGS)).toBeUndefined();
  });

  it("when a pass starts after a pause, then it starts a cut below the last learned rate, and probes back", () => {
    const state = learned({ at: T, rate: 270, max: 300 });
    expect(onResume(state, T + 5000, T + 10_000, fleet(0), SETTINGS)).toBeUndefined();
    const resumed = onResume(state, T + 5000, T + 5000 + IDLE_MS, fleet(0, 0, 9), SETTINGS);
    expect(resumed).toMatchObject({ rate: BETA * 300, max: 300, at: T + 5000 + IDLE_MS, atAccepted: 9 });
  });

  it("when the stored state is garbled, out of range or dated ahead of the server's clock, then it is not read", () => {
    const good = learned();
    expect(parseRateState(JSON.stringify(good), T)).toEqual(good);
    for (const bad of [
      { rate: 0 },
      { rate: -5 },
      { max: -1 },
      { version: 1.5 },
      { k: 0 },
      { at: T + 5 * 60_000 },
    ])
      expect(parseRateState(JSON.stringify({ ...good, ...bad }), T), JSON.stringify(bad)).toBeUndefined();
    expect(parseRateState("{", T)).toBeUndefined();
    expect(parseRateState(JSON.stringify({ ...good, at: T + RECOVER_MS }), T)).toBeDefined();
  });

  it("when operators ask what the rate does, then held, finding the speed, or at it", () => {
    const state = learned({ at: T });
    expect(phaseAt(state, T + 10, T + 5000)).toBe("backing-off");
    expect(phaseAt(state, T + 10, 0)).toBe("backing-off");
    expect(phaseAt(state, T + 1500, 0)).toBe("holding");
    expect(phaseAt(state, T + 3000, 0)).toBe("probing");
    expect(phaseAt(startState(SETTINGS, T, NONE), T, 0)).toBe("probing");
  });

  it("when answers take a second, then a cut's curve is back at its plateau no sooner than four round trips, the fleet's feedback, where quick answers keep K", () => {
    const slow = onRefused(
      learned(),
      { ...refusedAt(T + 10), roundTripMs: 1000 },
      fleet(300, 60),
      T + 20,
      SETTINGS,
    );
    expect(slow?.state.k).toBe(FEEDBACKS * 1000);
    const quick = onRefused(
      learned(),
      { ...refusedAt(T + 10), roundTripMs: 40 },
      fleet(300, 60),
      T + 20,
      SETTINGS,
    );
    expect(quick?.state.k).toBe(RECOVER_MS);
  });

  it("when sizing requests in flight, then the rate times the slowest answer (Little's law), at least one", () => {
    expect(concurrencyFor(1000, 400)).toBe(400);
    expect(concurrencyFor(10, 20)).toBe(1);
    expect(concurrencyFor(300, 35)).toBe(11);
  });
});
