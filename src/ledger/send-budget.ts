import { z } from "zod";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const script = new LuaScript("send-budget");

/**
 * send-budget.lua's own constants, for the code that must agree with the script: answers are kept by send
 * time in SLOTS slots of SLOT_MS, a process silent for PROC_TTL_MS holds nobody's answers back, and the
 * fleet's rate is counted per QUARTER_MS. test/ledger/send-budget.test.ts holds them to the script's.
 */
export const SEND_BUDGET_SCRIPT = { SLOT_MS: 20, SLOTS: 100, PROC_TTL_MS: 200, QUARTER_MS: 250 } as const;

const replySchema = z
  .tuple([
    z.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.string(),
    z.string(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
    z.coerce.number(),
  ])
  .transform(
    ([
      booked,
      waitMs,
      sentPerSec,
      version,
      state,
      heldUntil,
      now,
      lastSentAt,
      refused,
      judgedAccepted,
      judgedRefused,
      judgedRateSum,
      judgedSpanMs,
      taughtAccepted,
      taughtRefused,
      taughtWhole,
    ]) => ({
      refused,
      booked,
      waitMs,
      sentPerSec,
      version,
      state,
      heldUntil,
      now,
      lastSentAt,
      judged: {
        accepted: judgedAccepted,
        refused: judgedRefused,
        rateSum: judgedRateSum,
        spanMs: judgedSpanMs,
      },
      taught: { accepted: taughtAccepted, refused: taughtRefused, whole: taughtWhole === 1 },
    }),
  );

/**
 * What the budget says after a call: `booked` send times (the first in `waitMs`, then one every
 * interval), or none and when to ask again (`waitMs`); the shared state as stored (`state` is the learned
 * rate's JSON, '' when none yet, under `version`); the hold from Retry-After; what the fleet sent per
 * second lately; the server's clock (`now`) and when a request was last booked before this call; and the
 * fleet's answers as the report asked: the judged sample and the one that teaches the floor.
 */
export type BudgetReply = z.output<typeof replySchema>;

/** The service's answers to requests sent in one slice of time: how many accepted, refused, and their rates. */
export interface AnswerSlot {
  /** When the requests were sent (the server's ms). */
  readonly sentAt: number;
  readonly accepted: number;
  readonly refused: number;
  /** The sum of the fleet's rates the requests were sent at (requests per second). */
  readonly rateSum: number;
}

/**
 * What a process tells the budget with each call (all times the server's ms): the answers it heard, its
 * oldest request still unanswered, and which of the fleet's answers it wants back.
 */
export interface AnswerReport {
  readonly process: string;
  /** The oldest request this process still waits for an answer to; undefined: none. */
  readonly unansweredSince: number | undefined;
  /** Judge the answers to requests sent from this time. */
  readonly judgeFrom: number;
  /** The span whose answers teach the floor, and the rate they must have been sent within; 0: none. */
  readonly teachFrom: number;
  readonly teachTo: number;
  readonly teachWithin: number;
  readonly slots: readonly AnswerSlot[];
}

/** Requests a process sent without a booked time, while the schedule had room: charged with its next booking. */
export interface SentAlready {
  readonly count: number;
  /** How far back from now the first of them went (ms). */
  readonly spanMs: number;
}

export const NOTHING_SENT: SentAlready = { count: 0, spanMs: 0 };

function reportArgs(report: AnswerReport | undefined): (string | number)[] {
  if (report === undefined) return ["", "", 0, 0, 0, 0, 0];
  return [
    report.process,
    report.unansweredSince === undefined ? "" : Math.floor(report.unansweredSince),
    Math.floor(report.judgeFrom),
    Math.floor(report.teachFrom),
    Math.floor(report.teachTo),
    report.teachWithin.toFixed(3),
    report.slots.length,
    ...report.slots.flatMap((s) => [Math.floor(s.sentAt), s.accepted, s.refused, s.rateSum.toFixed(3)]),
  ];
}

/**
 * The fleet's send budget in Redis (send-budget.lua): one GCRA schedule for every process of a
 * deployment, so together they never send faster than the learned rate and never in bursts, a hold every
 * process honours, the learned rate's state, written only when it still has the version it was computed
 * from, and the fleet's answers by send time, so that every process judges the service on all of them.
 * The state is opaque here; src/submit/send-rate.ts gives it meaning.
 */
export class SendBudget {
  readonly #name: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.#name = new LedgerNames(prefix).sendBudget;
  }

  /**
   * Books up to `wanted` send times `intervalMs` apart, none further than `aheadMs` from now, after
   * charging the requests already `sent` (sent while the schedule had room, over its last `spanMs`).
   */
  async take(
    wanted: number,
    intervalMs: number,
    aheadMs: number,
    report?: AnswerReport,
    sent: SentAlready = NOTHING_SENT,
  ): Promise<BudgetReply> {
    const reply = await script.run(
      this.redis,
      [this.#name],
      [
        "take",
        wanted,
        intervalMs.toFixed(3),
        aheadMs,
        sent.count,
        Math.max(0, Math.round(sent.spanMs)),
        ...reportArgs(report),
      ],
    );
    return replySchema.parse(reply);
  }

  /**
   * Writes `state` (as version `version`) if the stored one is still `from`, and holds every request
   * back for `holdMs` (0: no hold), and counts `refused` more requests answered 429; `from`
   * undefined writes no state.
   */
  async event(
    change: { readonly from: string; readonly state: string; readonly version: string } | undefined,
    holdMs: number,
    refused = 0,
    report?: AnswerReport,
  ): Promise<BudgetReply> {
    const reply = await script.run(
      this.redis,
      [this.#name],
      [
        "event",
        change?.from ?? "",
        change?.state ?? "",
        change?.version ?? "",
        Math.max(0, Math.round(holdMs)),
        refused,
        ...reportArgs(report),
      ],
    );
    return replySchema.parse(reply);
  }

  /** The budget as it stands, without booking anything (status, /metrics). */
  read(): Promise<BudgetReply> {
    return this.event(undefined, 0);
  }
}
