import { describe, expect, it } from "vitest";
import { memoryBudget } from "../../src/dev/fleet-model/memory-budget.js";
import { VirtualTime } from "../../src/dev/fleet-model/virtual-time.js";
import type { BudgetPort } from "../../src/submit/send-pacer.js";
import { SendPacer, type SendTicket } from "../../src/submit/send-pacer.js";
import { DEFAULT_RATE_SETTINGS, type RateSettings } from "../../src/submit/send-rate.js";

const START = 1_700_000_000_000;

/** The in-memory budget (send-budget.lua's arithmetic), counting the bookings and what they booked. */
function countedBudget(time: VirtualTime) {
  const inner = memoryBudget(time, 1);
  const seen = { takes: 0, booked: 0 };
  const budget: BudgetPort = {
    take: async (wanted, interval, ahead, report, sent) => {
      seen.takes++;
      const reply = await inner.take(wanted, interval, ahead, report, sent);
      seen.booked += reply.booked + (sent?.count ?? 0);
      return reply;
    },
    event: (change, holdMs, refused, report) => inner.event(change, holdMs, refused, report),
  };
  return { budget, seen };
}

function pacerOn(time: VirtualTime, budget: BudgetPort, settings: RateSettings): SendPacer {
  return new SendPacer({
    budget,
    settings,
    retryAfterCapMs: 60_000,
    clock: () => time.now,
    timer: (fn, ms) => {
      time.at(ms, fn);
    },
    onError: (error: unknown) => {
      throw error;
    },
    process: "p1",
  });
}

/**
 * `count` requests, one every `everyMs`, each answered `latencyMs` after it went (accepted, or as `answer`
 * says); the times they went out.
 */
async function send(
  time: VirtualTime,
  pacer: SendPacer,
  count: number,
  everyMs: number,
  answer: (i: number, ticket: SendTicket) => "accepted" | "refused" = () => "accepted",
  latencyMs = 5,
): Promise<number[]> {
  const sent: number[] = [];
  let answered = 0;
  for (let i = 0; i < count; i++)
    time.at(i * everyMs, () => {
      void pacer.acquire().then((ticket) => {
        sent.push(ticket.sentAt);
        time.at(latencyMs, () => {
          answered++;
          if (answer(i, ticket) === "refused") pacer.onThrottled(ticket, 429, 1000);
          else pacer.onAccepted(ticket, latencyMs);
        });
      });
    });
  await time.run(() => answered === count, 60_000);
  return sent;
}

describe("a process's pacer and the fleet's budget", () => {
  it("when the budget has room, then requests go without a booking each, and every one sent is charged to the budget", async () => {
    const time = new VirtualTime(START);
    const { budget, seen } = countedBudget(time);
    const pacer = pacerOn(time, budget, { ...DEFAULT_RATE_SETTINGS, startRate: 4000 });
    // 1,000/s against a learned rate of 4,000/s: the budget always has room
    const sent = await send(time, pacer, 1000, 1);
    // let the last charges go out
    await time.run(() => false, 100);

    expect(sent).toHaveLength(1000);
    expect(seen.booked).toBe(1000);
    // one booking charges those sent in the last few ms (it was one booking per request or two)
    expect(seen.takes).toBeLessThan(1000 / 3);
  });

  it("when the requests come faster than the learned rate, then they go no faster than it, each waiting for its time", async () => {
    const time = new VirtualTime(START);
    const { budget, seen } = countedBudget(time);
    // a ceiling of 200/s holds the rate there, whatever the answers
    const pacer = pacerOn(time, budget, { ...DEFAULT_RATE_SETTINGS, startRate: 200, ceiling: 200 });
    const sent = await send(time, pacer, 400, 1);
    await time.run(() => false, 100);

    const spanMs = (sent.at(-1) ?? 0) - (sent[0] ?? 0);
    // 400 requests at 200/s take two seconds, less at most the one booked ahead
    expect(spanMs).toBeGreaterThanOrEqual(1990 - 15);
    // no 100 ms holds more than 200/s allows (and a request booked ahead)
    for (let t = sent[0] ?? 0; t < (sent.at(-1) ?? 0); t += 100) {
      const inSlice = sent.filter((s) => s >= t && s < t + 100).length;
      expect(inSlice).toBeLessThanOrEqual(21);
    }
    expect(seen.booked).toBe(400);
  });

  it("when the service refuses a request, then the requests after it are booked with the fleet's again, not sent on room", async () => {
    const time = new VirtualTime(START);
    const { budget, seen } = countedBudget(time);
    const pacer = pacerOn(time, budget, { ...DEFAULT_RATE_SETTINGS, startRate: 4000 });
    await send(time, pacer, 300, 1);
    await time.run(() => false, 100);
    const takesWithRoom = seen.takes;

    // one refusal, then as many requests again as before
    await send(time, pacer, 1, 1, () => "refused");
    const before = seen.takes;
    const next = pacer.acquire();
    let went = false;
    void next.then(() => {
      went = true;
    });
    await new Promise((resolve) => setImmediate(resolve));

    expect(takesWithRoom).toBeLessThan(300 / 3);
    // the request did not go at once: it waits for a booking's answer
    expect(went).toBe(false);
    await time.run(() => went, 1000);
    expect(went).toBe(true);
    expect(seen.takes).toBeGreaterThan(before);
  });
});

describe("a pacer closing", () => {
  /** A budget that never answers, as Redis away does to a worker's connection. */
  const silent: BudgetPort = {
    take: () => new Promise(() => undefined),
    event: () => new Promise(() => undefined),
  };

  it("when the budget does not answer, then the requests waiting for their send time are refused unsent on close, and later ones at once", async () => {
    const time = new VirtualTime(START);
    const pacer = pacerOn(time, silent, DEFAULT_RATE_SETTINGS);
    const waiting = [pacer.acquire(), pacer.acquire(), pacer.acquire()];
    await time.run(() => false, 1_000);
    pacer.close();
    for (const request of [...waiting, pacer.acquire()])
      await expect(request).rejects.toThrow(/not sent: submitting is held back \(the worker is stopping\)/);
  });

  it("when send times were booked ahead, then those not yet due are refused on close and those due were sent", async () => {
    const time = new VirtualTime(START);
    const pacer = pacerOn(time, memoryBudget(time, 1), { ...DEFAULT_RATE_SETTINGS, startRate: 10 });
    // at 10/s, booked send times 100 ms apart
    const settled = Array.from({ length: 5 }, () =>
      pacer.acquire().then(
        () => "sent",
        () => "refused",
      ),
    );
    await time.run(() => false, 150);
    pacer.close();
    await time.run(() => false, 1_000);
    const outcomes = await Promise.all(settled);
    expect(outcomes.filter((o) => o === "sent").length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o === "refused").length).toBeGreaterThan(0);
    expect(outcomes.indexOf("refused")).toBe(outcomes.lastIndexOf("sent") + 1);
  });
});
