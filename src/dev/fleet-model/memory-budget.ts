import {
  NOTHING_SENT,
  SEND_BUDGET_SCRIPT,
  type AnswerReport,
  type BudgetReply,
} from "../../ledger/send-budget.js";
import type { BudgetPort } from "../../submit/send-pacer.js";
import type { VirtualTime } from "./virtual-time.js";

const { SLOT_MS, SLOTS, PROC_TTL_MS, QUARTER_MS } = SEND_BUDGET_SCRIPT;

/** What the model's budget noted, for its traces: each state written, when. */
export interface BudgetTrace {
  readonly at: number;
  readonly state: string;
}

/**
 * send-budget.lua's arithmetic in memory (src/ledger/lua/send-budget.lua: the GCRA schedule, the state
 * written by version, the hold, the fleet's answers by send time and each process's oldest request
 * unanswered), each call answered one Redis round trip later on the model's time. The script is what
 * runs in production; test/ledger/send-budget.test.ts holds it to the same replies.
 */
export function memoryBudget(time: VirtualTime, roundTripMs: number, traces?: BudgetTrace[]): BudgetPort {
  const b = { tat: 0, hold: 0, v: "0", state: "", seen: 0, refused: 0, quarter: 0, cnt: 0, prev: 0 };
  const slots = new Map<number, { a: number; r: number; q: number }>();
  const procs = new Map<string, { ms: number; at: number }>();

  const answers = (report: AnswerReport | undefined) => {
    const now = time.now;
    const judged = { accepted: 0, refused: 0, rateSum: 0, spanMs: 0 };
    const taught = { accepted: 0, refused: 0, whole: false };
    if (report === undefined) return { judged, taught };
    for (const s of report.slots) {
      const slot = Math.floor(s.sentAt / SLOT_MS);
      const held = slots.get(slot) ?? { a: 0, r: 0, q: 0 };
      held.a += s.accepted;
      held.r += s.refused;
      held.q += s.rateSum;
      slots.set(slot, held);
    }
    for (const slot of slots.keys()) if (slot <= Math.floor(now / SLOT_MS) - SLOTS) slots.delete(slot);
    if (report.unansweredSince === undefined) procs.delete(report.process);
    else procs.set(report.process, { ms: report.unansweredSince, at: now });
    let whole = now;
    for (const [id, p] of procs)
      if (p.at <= now - PROC_TTL_MS) procs.delete(id);
      else whole = Math.min(whole, p.ms);
    const from = report.judgeFrom;
    const first = Math.max(
      Math.floor(Math.min(from, report.teachFrom > 0 ? report.teachFrom : from) / SLOT_MS),
      Math.floor(now / SLOT_MS) - SLOTS + 1,
    );
    let started = false;
    let firstJudged: number | undefined;
    for (let slot = first; slot <= Math.floor(whole / SLOT_MS) - 1; slot++) {
      const s = slots.get(slot);
      if (s === undefined) continue;
      const start = slot * SLOT_MS;
      if (start + SLOT_MS > from) {
        if (started && s.a + s.r > 0) {
          judged.accepted += s.a;
          judged.refused += s.r;
          judged.rateSum += s.q;
          firstJudged ??= slot;
          judged.spanMs = (slot - firstJudged + 1) * SLOT_MS;
        }
        if (s.r > 0) started = true;
      }
      const answered = s.a + s.r;
      if (
        start >= report.teachFrom &&
        start < report.teachTo &&
        answered > 0 &&
        s.q / answered <= report.teachWithin
      ) {
        taught.accepted += s.a;
        taught.refused += s.r;
      }
    }
    taught.whole = report.teachTo > 0 && whole >= report.teachTo;
    return { judged, taught };
  };

  const reply = (booked: number, wait: number, report: AnswerReport | undefined): BudgetReply => {
    const now = time.now;
    roll(now);
    return {
      booked,
      waitMs: wait,
      sentPerSec: (b.prev * (1 - (now % QUARTER_MS) / QUARTER_MS) + b.cnt) * (1000 / QUARTER_MS),
      version: b.v,
      state: b.state,
      heldUntil: b.hold,
      now,
      lastSentAt: b.seen,
      refused: b.refused,
      ...answers(report),
    };
  };
  const roll = (now: number): void => {
    const quarter = Math.floor(now / QUARTER_MS);
    if (b.quarter === quarter) return;
    b.prev = b.quarter === quarter - 1 ? b.cnt : 0;
    b.cnt = 0;
    b.quarter = quarter;
  };
  const later = <T>(fn: () => T): Promise<T> =>
    new Promise((resolve) => {
      time.at(roundTripMs / 2, () => {
        const value = fn();
        time.at(roundTripMs / 2, () => {
          resolve(value);
        });
      });
    });

  return {
    take: (wanted, interval, ahead, report, sent = NOTHING_SENT) =>
      later(() => {
        const now = time.now;
        roll(now);
        let charged = b.tat;
        if (sent.count > 0) charged = Math.max(charged, now - sent.spanMs) + sent.count * interval;
        const tat = Math.max(charged, now, b.hold);
        const wait = tat - now;
        const booked = wait > ahead ? 0 : Math.min(wanted, Math.floor((ahead - wait) / interval) + 1);
        const seen = b.seen;
        if (booked + sent.count > 0) {
          b.tat = wait > ahead ? charged : tat + booked * interval;
          b.seen = now;
          b.cnt += booked + sent.count;
        }
        return { ...reply(booked, wait > ahead ? wait - ahead : wait, report), lastSentAt: seen };
      }),
    event: (change, holdMs, refused = 0, report) =>
      later(() => {
        if (change !== undefined && change.from === b.v) {
          b.v = change.version;
          b.state = change.state;
          traces?.push({ at: time.now, state: change.state });
        }
        b.refused += refused;
        if (holdMs > 0 && time.now + holdMs > b.hold) b.hold = time.now + holdMs;
        return reply(0, 0, report);
      }),
  };
}
