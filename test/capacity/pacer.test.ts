import { describe, expect, it } from "vitest";
import {
  RECOVER_MS,
  SendPacer,
  parseRateState,
  type RateEvent,
  type RateSettings,
  type SendTicket,
} from "../../src/capacity/index.js";
import { memoryBudget, type BudgetTrace, type StoredState } from "../../src/dev/fleet-model/memory-budget.js";
import { VirtualTime } from "../../src/dev/fleet-model/virtual-time.js";
import type { BudgetPort } from "../../src/ledger/send-budget.js";
import { RequestHeldBackError } from "../../src/submit/errors/request-held-back-error.js";

const START = 1_700_000_000_000;
const SETTINGS: RateSettings = { ceiling: 0, startRate: 100, retryAfterCapMs: 60_000 };

/** The in-memory budget (send-budget.lua's arithmetic), counting its calls and what they booked. */
function countedBudget(time: VirtualTime, stored?: StoredState) {
  const inner = memoryBudget(time, 1, undefined, stored);
  const seen = { calls: 0, booked: 0, capped: false };
  const budget: BudgetPort = {
    call: async (call) => {
      seen.calls++;
      seen.capped = call.capped === true;
      const reply = await inner.call(call);
      seen.booked += reply.booked + (call.owed ?? 0);
      return reply;
    },
  };
  return { budget, seen };
}

function pacerOn(time: VirtualTime, budget: BudgetPort, settings: Partial<RateSettings> = {}): SendPacer {
  return new SendPacer({
    budget,
    settings: { ...SETTINGS, ...settings },
    clock: () => time.now,
    timer: (fn, ms) => {
      time.at(ms, fn);
    },
    onError: (error: unknown) => {
      throw error;
    },
  });
}

/** `count` requests, one every `everyMs`, each answered `latencyMs` after it went; the times they went. */
async function send(
  time: VirtualTime,
  pacer: SendPacer,
  count: number,
  everyMs: number,
  answer: (i: number) => "accepted" | "refused" = () => "accepted",
  latencyMs = 5,
): Promise<number[]> {
  const sent: number[] = [];
  let answered = 0;
  for (let i = 0; i < count; i++)
    time.at(i * everyMs, () => {
      void pacer.acquire().then((ticket: SendTicket) => {
        sent.push(ticket.sentAt);
        time.at(latencyMs, () => {
          answered++;
          if (answer(i) === "refused") pacer.onRefused(ticket, 0);
          else pacer.onAccepted(ticket, latencyMs);
        });
      });
    });
  await time.run(() => answered === count, 120_000);
  return sent;
}

describe("a process's pacer and the fleet's budget", () => {
  it("when the budget has room, then requests go without a booking each, and every one sent is charged to the budget", async () => {
    const time = new VirtualTime(START);
    const { budget, seen } = countedBudget(time);
    const pacer = pacerOn(time, budget, { startRate: 4000 });
    const sent = await send(time, pacer, 1000, 1);
    await time.run(() => false, 100);
    expect(sent).toHaveLength(1000);
    expect(seen.booked).toBe(1000);
    expect(seen.calls).toBeLessThan(1000 / 3);
  });

  it("when the requests come faster than the rate, then they go no faster than it, each waiting for its time", async () => {
    const time = new VirtualTime(START);
    const { budget } = countedBudget(time);
    const pacer = pacerOn(time, budget, { startRate: 200, ceiling: 200 });
    const sent = await send(time, pacer, 400, 1);
    const spanMs = (sent.at(-1) ?? 0) - (sent[0] ?? 0);
    // 400 requests at 200/s take two seconds, less at most the ones booked ahead
    expect(spanMs).toBeGreaterThanOrEqual(1990 - 15);
    for (let t = sent[0] ?? 0; t < (sent.at(-1) ?? 0); t += 100)
      expect(sent.filter((s) => s >= t && s < t + 100).length).toBeLessThanOrEqual(21);
  });

  it("when the pacer is closed while requests wait for their send time, then each fails unsent at once, later ones too, and the budget is asked nothing more", async () => {
    const time = new VirtualTime(START);
    const { budget, seen } = countedBudget(time);
    const pacer = pacerOn(time, budget, { startRate: 1, ceiling: 1 });
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++)
      pacer.acquire().then(
        () => outcomes.push("sent"),
        (error: unknown) => outcomes.push(error instanceof RequestHeldBackError ? "held" : "other"),
      );
    await time.run(() => outcomes.length >= 2, 3000);
    const sentBefore = outcomes.filter((o) => o === "sent").length;
    expect(sentBefore).toBeGreaterThan(0);
    expect(sentBefore).toBeLessThan(10);
    pacer.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcomes.filter((o) => o === "held")).toHaveLength(10 - sentBefore);
    await expect(pacer.acquire()).rejects.toBeInstanceOf(RequestHeldBackError);
    const calls = seen.calls;
    await time.run(() => false, 5000);
    expect(seen.calls).toBe(calls);
  });

  it("when the stored state is deleted, garbled, out of range or dated ahead, then the next answer of the budget replaces it with the last good one, never left empty nor trusted", async () => {
    const time = new VirtualTime(START);
    const stored: StoredState = { v: "0", state: "" };
    const pacer = pacerOn(time, countedBudget(time, stored).budget, { startRate: 200, ceiling: 200 });
    await send(time, pacer, 50, 5);
    const good = parseRateState(stored.state, time.now);
    expect(good?.rate).toBe(200);
    const tampered: StoredState[] = [
      { v: "0", state: "" },
      { v: "7", state: "{garbled" },
      { v: "8", state: JSON.stringify({ ...good, rate: -5 }) },
      { v: "9", state: JSON.stringify({ ...good, at: time.now + 5 * 60_000 }) },
      { v: "10", state: JSON.stringify({ ...good, max: undefined }) },
    ];
    for (const bad of tampered) {
      Object.assign(stored, bad);
      await send(time, pacer, 20, 5);
      const now = parseRateState(stored.state, time.now);
      expect(now, bad.state).toBeDefined();
      expect(now?.rate, bad.state).toBe(good?.rate);
      expect(Number(stored.v)).toBeGreaterThan(Number(bad.v));
    }
  });

  it("when a process starts on a state it cannot trust and has none of its own, then it replaces it with a slow start from the start rate", async () => {
    const time = new VirtualTime(START);
    const stored: StoredState = { v: "3", state: JSON.stringify({ version: 3, rate: 0, at: START, max: 0 }) };
    const pacer = pacerOn(time, countedBudget(time, stored).budget, { startRate: 40 });
    await send(time, pacer, 1, 1);
    expect(parseRateState(stored.state, time.now)).toMatchObject({ rate: 40, max: 0, version: 4 });
  });

  it("when refusals cut the rate of two processes sharing one budget, then each cut is told once, by the process whose write it was, with the rate and plateau stored", async () => {
    const time = new VirtualTime(START);
    const traces: BudgetTrace[] = [];
    const budget = memoryBudget(time, 1, traces);
    const events: RateEvent[] = [];
    const pacers = [0, 1].map(
      () =>
        new SendPacer({
          budget,
          settings: SETTINGS,
          clock: () => time.now,
          timer: (fn, ms) => {
            time.at(ms, fn);
          },
          onError: (error: unknown) => {
            throw error;
          },
          onEvent: (event) => events.push(event),
        }),
    );
    // both send while the service refuses a stretch of their requests
    await Promise.all(
      pacers.map((pacer) => send(time, pacer, 300, 2, (i) => (i >= 100 && i < 160 ? "refused" : "accepted"))),
    );
    const stored = traces.map((t) => JSON.parse(t.state) as { rate: number; max: number; at: number });
    const cuts = stored.filter(
      (s, i) => i > 0 && s.at > (stored[i - 1]?.at ?? 0) && s.rate < (stored[i - 1]?.rate ?? 0),
    );
    expect(cuts.length).toBeGreaterThan(0);
    expect(events).toEqual(cuts.map((c) => ({ kind: "cut", rate: c.rate, plateau: c.max })));
  });

  it("when the rate needs more requests in flight than SUBMIT_CONCURRENCY allows, then the pacer gives the ceiling and says it caps", async () => {
    const time = new VirtualTime(START);
    const { budget, seen } = countedBudget(time);
    const pacer = pacerOn(time, budget, { startRate: 1000, ceiling: 1000 });
    // before any answer, the first flight: TCP's initial window of ten
    expect(pacer.concurrency(1000)).toBe(10);
    expect(pacer.concurrency(4)).toBe(4);
    await send(time, pacer, 20, 1, () => "accepted", 400);
    // 1,000/s × 400 ms: 400 in flight
    expect(pacer.concurrency(1000)).toBe(400);
    expect(seen.capped).toBe(false);
    expect(pacer.concurrency(32)).toBe(32);
    // the fleet hears it with the next call to the budget
    await send(time, pacer, 1, 1, () => "accepted", 400);
    expect(seen.capped).toBe(true);
  });
  it("when asked what the rate needs in hand for a time each, then it is rate × time (Little's law), within the ceiling given", async () => {
    const time = new VirtualTime(START);
    const pacer = pacerOn(time, countedBudget(time).budget, { startRate: 100, ceiling: 100 });
    await send(time, pacer, 20, 1, () => "accepted", 30);
    expect(pacer.needFor(RECOVER_MS, 1024)).toBe(100);
    expect(pacer.needFor(80, 1024)).toBe(8);
    expect(pacer.needFor(3000, 64)).toBe(64);
  });
});
