import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { luaSource } from "../../src/ledger/lua-script.js";
import {
  SEND_BUDGET_SCRIPT,
  SendBudget,
  type AnswerReport,
  type AnswerSlot,
} from "../../src/ledger/send-budget.js";
import { testPrefix, testRedis } from "../support/redis.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

/** A report from `process` of `slots`, judging from `judgeFrom`, with its oldest request unanswered. */
function report(
  process: string,
  judgeFrom: number,
  unansweredSince: number | undefined,
  slots: readonly AnswerSlot[],
  teach: Partial<Pick<AnswerReport, "teachFrom" | "teachTo" | "teachWithin">> = {},
): AnswerReport {
  return { process, judgeFrom, unansweredSince, teachFrom: 0, teachTo: 0, teachWithin: 0, slots, ...teach };
}

const slot = (sentAt: number, accepted: number, refused: number, rate = 300): AnswerSlot => ({
  sentAt,
  accepted,
  refused,
  rateSum: (accepted + refused) * rate,
});

/** The server's clock, rounded down to a 20 ms slot, minus `ago` slots. */
async function slotsAgo(budget: SendBudget, ago: number): Promise<number> {
  const { now } = await budget.read();
  return Math.floor(now / 20) * 20 - ago * 20;
}

describe("the fleet's answers in the send budget", () => {
  it("when two processes report answers, then the judged sample is theirs together, after the first refused slot and before the oldest request any process still waits for", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const t = await slotsAgo(budget, 20);
    await budget.event(
      undefined,
      0,
      0,
      report("a", t, undefined, [slot(t, 5, 0), slot(t + 20, 3, 1), slot(t + 40, 3, 2)]),
    );
    // b still waits for an answer to a request sent in the slot at t + 60: slots from there on are not whole
    const reply = await budget.event(
      undefined,
      0,
      0,
      report("b", t, t + 65, [slot(t + 40, 2, 1), slot(t + 60, 0, 4), slot(t + 80, 1, 1)]),
    );
    // the slot of the first refusal (t + 20) starts the sample and is left out; t + 40 is in; t + 60 on are not whole
    expect(reply.judged).toEqual({ accepted: 5, refused: 3, rateSum: 8 * 300, spanMs: 20 });
  });

  it("when the fleet sends slowly, then the judged span runs from the first slot with answers to the last, the empty ones between included", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const t = await slotsAgo(budget, 20);
    const slots = [slot(t, 0, 1), slot(t + 40, 1, 0), slot(t + 100, 1, 0), slot(t + 160, 0, 1)];
    const reply = await budget.event(undefined, 0, 0, report("a", t, undefined, slots));
    expect(reply.judged).toMatchObject({ accepted: 2, refused: 1, spanMs: 140 });
  });

  it("when a process stops reporting (its event loop busy), then after a fifth of a second it no longer keeps the fleet's answers from being whole", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const t = await slotsAgo(budget, 10);
    await budget.event(undefined, 0, 0, report("gone", t, t, []));
    const held = await budget.event(
      undefined,
      0,
      0,
      report("a", t, undefined, [slot(t, 0, 1), slot(t + 20, 4, 2)]),
    );
    expect(held.judged.accepted + held.judged.refused).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const t2 = await slotsAgo(budget, 10);
    const later = await budget.event(
      undefined,
      0,
      0,
      report("a", t2, undefined, [slot(t2, 0, 1), slot(t2 + 20, 4, 2)]),
    );
    expect(later.judged).toMatchObject({ accepted: 4, refused: 2 });
  });

  it("when answers are asked for the span after a cut, then those sent within the rate teach, and the span says when it is whole", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const t = await slotsAgo(budget, 30);
    const teach = { teachFrom: t, teachTo: t + 100, teachWithin: 285 };
    const slots = [
      slot(t, 10, 0, 270),
      slot(t + 20, 9, 1, 280),
      slot(t + 40, 8, 2, 400),
      slot(t + 120, 5, 5, 270),
    ];
    const open = await budget.event(undefined, 0, 0, report("a", t, t + 50, slots, teach));
    expect(open.taught).toEqual({ accepted: 19, refused: 1, whole: false });
    const whole = await budget.event(undefined, 0, 0, report("a", t, undefined, [], teach));
    expect(whole.taught).toEqual({ accepted: 19, refused: 1, whole: true }); // t + 40 was sent too fast to teach
  });

  it("when the service refused nothing since the judged span began, then nothing is judged, yet the span after a cut still teaches", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const t = await slotsAgo(budget, 40);
    // refusals before the cut at t + 200, then only acceptances
    await budget.event(undefined, 0, 0, report("a", t, undefined, [slot(t, 2, 3), slot(t + 20, 1, 4)]));
    const teach = { teachFrom: t + 200, teachTo: t + 300, teachWithin: 285 };
    const calm = await budget.event(
      undefined,
      0,
      0,
      report("a", t + 200, undefined, [slot(t + 200, 6, 0, 270), slot(t + 240, 7, 0, 270)], teach),
    );
    expect(calm.judged).toEqual({ accepted: 0, refused: 0, rateSum: 0, spanMs: 0 });
    expect(calm.taught).toEqual({ accepted: 13, refused: 0, whole: true });
    // a refusal after the cut: judged from its slot on again
    const refused = await budget.event(
      undefined,
      0,
      0,
      report("a", t + 200, undefined, [slot(t + 320, 0, 2), slot(t + 340, 3, 1)]),
    );
    expect(refused.judged).toMatchObject({ accepted: 3, refused: 1 });
  });

  it("when answers are reported for slots older than the ring holds, then they are not counted", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const t = await slotsAgo(budget, 150);
    const reply = await budget.event(
      undefined,
      0,
      0,
      report("a", t, undefined, [slot(t, 0, 1), slot(t + 20, 7, 0)]),
    );
    expect(reply.judged).toEqual({ accepted: 0, refused: 0, rateSum: 0, spanMs: 0 });
  });

  it("when requests are booked, then what the fleet sent per second is read over the last quarter of a second", async () => {
    const budget = new SendBudget(redis, testPrefix());
    const reply = await budget.take(16, 1, 15);
    expect(reply.booked).toBe(16);
    expect(reply.sentPerSec).toBeGreaterThanOrEqual(64); // 16 in a quarter of a second at least
  });

  it("when requests already sent are charged, then they take the schedule's last while, so a fleet under its rate keeps room, and one past it does not", async () => {
    const budget = new SendBudget(redis, testPrefix());
    // 5 sent over the last 100 ms, at 10 ms apart: the schedule is not ahead of now
    const under = await budget.take(0, 10, 15, undefined, { count: 5, spanMs: 100 });
    expect(under.booked).toBe(0);
    expect(under.waitMs).toBe(0);
    expect(under.sentPerSec).toBeGreaterThanOrEqual(20);
    // 20 more sent over the last 50 ms: 200 ms of the schedule, the next time is well ahead
    const past = await budget.take(0, 10, 15, undefined, { count: 20, spanMs: 50 });
    expect(past.waitMs).toBeGreaterThan(100);
    // and a request that wants a time now waits for it
    const next = await budget.take(1, 10, 15);
    expect(next.booked).toBe(0);
    expect(next.waitMs).toBeGreaterThan(100);
  });
});

describe("the script's constants on the TypeScript side", () => {
  it("when send-budget.lua's slots, process silence or rate quarter change, then SEND_BUDGET_SCRIPT says the same", () => {
    const source = luaSource("send-budget");
    expect(source).toContain(
      `local SLOT_MS, SLOTS, PROC_TTL_MS = ${SEND_BUDGET_SCRIPT.SLOT_MS}, ${SEND_BUDGET_SCRIPT.SLOTS}, ${SEND_BUDGET_SCRIPT.PROC_TTL_MS}\n`,
    );
    expect(source).toContain(`local QUARTER_MS = ${SEND_BUDGET_SCRIPT.QUARTER_MS}\n`);
  });
});
