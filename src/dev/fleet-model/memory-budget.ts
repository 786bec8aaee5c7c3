import type { BudgetCall, BudgetPort, BudgetReply } from "../../ledger/send-budget.js";
import { LATELY_MS as QUARTER_MS } from "../../ledger/send-budget.js";
import type { VirtualTime } from "./virtual-time.js";

/** What the model's budget noted, for its traces: each state written, when. */
export interface BudgetTrace {
  readonly at: number;
  readonly state: string;
}

/** The learned rate's state as the budget stores it (its version and JSON): a test may delete or garble it. */
export interface StoredState {
  v: string;
  state: string;
}

/**
 * send-budget.lua in memory (the GCRA schedule, the hold, the state by compare-and-set, the counts),
 * each call answered one Redis round trip later on the model's time. The script is what runs in
 * production; test/ledger/send-budget.test.ts holds both to the same replies.
 */
export function memoryBudget(
  time: VirtualTime,
  roundTripMs: number,
  traces?: BudgetTrace[],
  stored: StoredState = { v: "0", state: "" },
): BudgetPort {
  const b = { last: 0, hold: 0, seen: 0, capped: 0, refusedAt: 0, sent: 0, accepted: 0, refused: 0 };
  let quarter = 0;
  let cur = { s: 0, a: 0, r: 0 };
  let prev = { s: 0, a: 0, r: 0 };
  const call = (c: BudgetCall): BudgetReply => {
    const now = Math.floor(time.now);
    const q = Math.floor(now / QUARTER_MS);
    if (q !== quarter) {
      prev = q === quarter + 1 ? cur : { s: 0, a: 0, r: 0 };
      cur = { s: 0, a: 0, r: 0 };
      quarter = q;
    }
    const { wanted = 0, intervalMs = 1, aheadMs = 0, owed = 0, spanMs = 0, accepted = 0, refused = 0 } = c;
    let last = b.last;
    if (owed > 0) last = Math.max(last + intervalMs, now - spanMs) + (owed - 1) * intervalMs;
    const go = Math.max(last + intervalMs, now, b.hold);
    let wait = go - now;
    let booked = 0;
    if (wait <= aheadMs) {
      booked = Math.min(wanted, Math.floor((aheadMs - wait) / intervalMs) + 1);
      if (booked > 0) last = go + (booked - 1) * intervalMs;
    } else wait -= aheadMs;
    const seen = b.seen;
    if (booked + owed > 0) {
      b.last = last;
      b.seen = now;
    }
    cur.s += booked + owed;
    cur.a += accepted;
    cur.r += refused;
    b.sent += booked + owed;
    b.accepted += accepted;
    b.refused += refused;
    const holdMs = Math.round(c.holdMs ?? 0);
    if (holdMs > 0 && now + holdMs > b.hold) b.hold = now + holdMs;
    if (c.write !== undefined && c.write.from === stored.v) {
      stored.v = c.write.version;
      stored.state = c.write.state;
      traces?.push({ at: time.now, state: c.write.state });
    }
    if (c.capped === true) b.capped = now;
    if (refused > 0) b.refusedAt = now;
    const lately = (n: number, p: number) =>
      (p * (1 - (now % QUARTER_MS) / QUARTER_MS) + n) * (1000 / QUARTER_MS);
    return {
      booked,
      waitMs: wait,
      now,
      hold: b.hold,
      v: stored.v,
      state: stored.state,
      seen,
      sentPerSec: lately(cur.s, prev.s),
      acceptedPerSec: lately(cur.a, prev.a),
      refusedPerSec: lately(cur.r, prev.r),
      accepted: b.accepted,
      refused: b.refused,
      capped: b.capped,
      refusedAt: b.refusedAt,
    };
  };
  return {
    call: (c) =>
      new Promise((resolve) => {
        // the script runs half a round trip after the call, and its reply takes the other half
        time.at(roundTripMs / 2, () => {
          const reply = call(c);
          time.at(roundTripMs / 2, () => {
            resolve(reply);
          });
        });
      }),
  };
}
