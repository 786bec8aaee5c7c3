import { describe, expect, it } from "vitest";
import type { BudgetReply } from "../../src/ledger/send-budget.js";
import { RefusalFloor } from "../../src/submit/refusal-floor.js";
import { SendPacer, type BudgetPort } from "../../src/submit/send-pacer.js";
import { DEFAULT_RATE_SETTINGS } from "../../src/submit/send-rate.js";

const T0 = 1_800_000_000_000;

/** A deterministic stream of numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Feeds `seconds` of answers at `perSec`, each refused when `refuse` says so; a refusal judged over capacity
 * restarts the floor as the pacer's cut does (answers within 400 ms are to requests sent before it).
 * Returns the refusals, those judged over capacity, and the end.
 */
function feed(floor: RefusalFloor, from: number, seconds: number, perSec: number, refuse: () => boolean) {
  let judged = 0;
  let refused = 0;
  for (let i = 0; i < seconds * perSec; i++) {
    const now = from + (i * 1000) / perSec;
    const no = refuse();
    floor.observe(no, now);
    if (no) {
      refused++;
      if (floor.overCapacity()) {
        judged++;
        floor.restart(now + 400);
      }
    }
  }
  return { judged, refused, end: from + seconds * 1000 };
}

describe("the refusal floor", () => {
  it("when nothing is known yet, then a lone 429 is not capacity but a refused tenth of the answers is", () => {
    const floor = new RefusalFloor();
    const { end } = feed(floor, T0, 2, 200, () => false);
    floor.observe(true, end);
    expect(floor.overCapacity()).toBe(false);
    // the next half second, a quarter refused: the probe went past the capacity
    for (let i = 1; i <= 100; i++) floor.observe(i % 4 === 0, end + i * 5);
    expect(floor.overCapacity()).toBe(true);
  });

  it("when the answers after a cut were all accepted, then the floor is 0 and the next 429 speaks of capacity", () => {
    const floor = new RefusalFloor();
    floor.restart(T0 + 400);
    const { end } = feed(floor, T0 + 400, 2, 200, () => false);
    expect(floor.floor).toBe(0);
    floor.observe(true, end);
    expect(floor.overCapacity()).toBe(true);
  });

  it("when the service refuses 5 % at any rate, then the floor learns it after a cut and almost no 429 counts as capacity", () => {
    const draw = random(7);
    const floor = new RefusalFloor();
    floor.restart(T0 + 400);
    const warm = feed(floor, T0 + 400, 5, 200, () => draw() < 0.05);
    expect(floor.floor).toBeGreaterThan(0.02);
    expect(floor.floor).toBeLessThan(0.08);
    const after = feed(floor, warm.end, 60, 200, () => draw() < 0.05);
    expect(after.refused).toBeGreaterThan(400);
    expect(after.judged / after.refused).toBeLessThan(0.02);
  });

  it("when the rate goes past the capacity on top of random refusals, then the 429s count as capacity", () => {
    const draw = random(11);
    const floor = new RefusalFloor();
    floor.restart(T0 + 400);
    const warm = feed(floor, T0 + 400, 10, 200, () => draw() < 0.05);
    // sent 1.25 × the capacity: a fifth of the requests refused for capacity, on top of the 5 %
    const over = feed(floor, warm.end, 1, 250, () => draw() < 0.05 || draw() < 0.2);
    expect(over.judged).toBeGreaterThan(0);
  });

  it("when the rate was cut, then the refusals before it and the answers during the guard are not judged again", () => {
    const floor = new RefusalFloor();
    for (let i = 0; i < 30; i++) floor.observe(i % 2 === 0, T0 + i);
    expect(floor.overCapacity()).toBe(true);
    floor.restart(T0 + 400);
    floor.observe(true, T0 + 100); // an answer to a request sent before the cut
    expect(floor.recent()).toEqual({ share: 0, answers: 0 });
    expect(floor.overCapacity()).toBe(false);
    for (let i = 0; i < 30; i++) floor.observe(false, T0 + 400 + i);
    expect(floor.recent()).toEqual({ share: 0, answers: 30 });
  });

  it("when the fleet stays above a capacity that dropped, then its refusals keep counting as capacity", () => {
    const draw = random(3);
    const floor = new RefusalFloor();
    floor.restart(T0 + 400);
    let at = feed(floor, T0 + 400, 3, 20, () => false).end;
    // sending 20/s against 13/s, a third refused, for 10 s: the fleet must keep being told to cut
    let judged = 0;
    for (let second = 0; second < 10; second++) {
      const outcome = feed(floor, at, 1, 20, () => draw() < 0.35);
      judged += outcome.judged;
      at = outcome.end;
    }
    expect(judged).toBeGreaterThanOrEqual(5);
    expect(floor.floor).toBeLessThan(0.1);
  });
});

/** A budget in memory: books every request at once and keeps the state and hold it is given. */
function memoryBudget(clock: () => number) {
  let state = "";
  let version = "0";
  let heldUntil = 0;
  const changes: string[] = [];
  const holds: number[] = [];
  let refused = 0;
  const reply = (booked: number): BudgetReply => ({
    booked,
    waitMs: 0,
    sentPerSec: 200,
    version,
    state,
    heldUntil,
    now: clock(),
    lastSentAt: 0,
    refused,
  });
  const port: BudgetPort = {
    take: (wanted) => Promise.resolve(reply(wanted)),
    event: (change, holdMs, more = 0) => {
      refused += more;
      if (change !== undefined && change.from === version) {
        state = change.state;
        version = change.version;
        changes.push(change.state);
      }
      if (holdMs > 0) {
        holds.push(holdMs);
        heldUntil = Math.max(heldUntil, clock() + holdMs);
      }
      return Promise.resolve(reply(0));
    },
  };
  return { port, changes, holds, refused: () => refused };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the send pacer against random refusals", () => {
  it("when 429s come at random at a steady share, then the fleet's rate is not cut again and again nor held for each Retry-After, and every 429 is counted", async () => {
    let now = T0;
    const clock = () => now;
    const budget = memoryBudget(clock);
    const pacer = new SendPacer({
      budget: budget.port,
      settings: DEFAULT_RATE_SETTINGS,
      retryAfterCapMs: 60_000,
      clock,
      onError: (error) => {
        throw error;
      },
    });
    await pacer.acquire();
    await settle();
    const draw = random(5);
    let refusedAnswers = 0;
    let learned = { changes: 0, holds: 0, refused: 0 };
    // 30 s of answers at 200/s, 5 % of them 429 at random; in the first 5 s the floor is being learned
    for (let i = 0; i < 6000; i++) {
      if (i === 1000)
        learned = { changes: budget.changes.length, holds: budget.holds.length, refused: refusedAnswers };
      now += 5;
      if (draw() < 0.05) {
        refusedAnswers++;
        pacer.onThrottled(429, 1000);
      } else pacer.onAccepted(20);
      await settle();
    }
    await settle();
    // a cut is a state with a new start and the service marked refusing
    const states = budget.changes.map((text) => JSON.parse(text) as { at: number; refusingSince: number });
    const cutAt = (i: number) => (states[i]?.refusingSince ?? 0) > 0 && states[i]?.at !== states[i - 1]?.at;
    const cuts = states.filter((_, i) => i >= learned.changes && cutAt(i)).length;
    const holds = budget.holds.length - learned.holds;
    const later = refusedAnswers - learned.refused;
    expect(later).toBeGreaterThan(150);
    expect(cuts).toBeLessThanOrEqual(5); // refused at random, the old pacer cut every 400 ms: about 60 times
    expect(holds).toBeLessThan(later / 20);
    expect(budget.refused()).toBe(refusedAnswers);
    expect(pacer.throttled).toBe(refusedAnswers);
  });
});
