import type { BudgetReply } from "../ledger/send-budget.js";
import type { RefusalFloor } from "./refusal-floor.js";
import {
  onProbeReached,
  onRefusedPastPlateau,
  onThrottled,
  rateAt,
  type RateSettings,
  type RateState,
} from "./send-rate.js";

/** Refusals of the fleet past the plateau, beyond those the floor explains, that take the rate back to it. */
const SOFT_REFUSALS = 3;
/** ... counted over this last while. */
const SOFT_WINDOW_MS = 500;
/** The share of the fleet's sending rate the first refusals of a probe from nothing take it to (before beta). */
const SLOW_START_EXIT = 1;
/** The fleet is held for Retry-After when the service accepts less than this share of what it is sent. */
const HOLD_BELOW_SHARE = 0.5;
/** The 429s whose Retry-After the fleet may be held for are those of this last while. */
const RETRY_AFTER_WINDOW_MS = 500;

/** What the fleet's answers call for: a state to write (undefined: none), and a hold of every process. */
export interface Verdict {
  readonly next: RateState | undefined;
  readonly holdMs: number;
}

/**
 * The fleet's answers, as each budget reply gives them, judged for one process's pacer
 * (src/submit/send-pacer.ts): a cut with the capacity the answers show, a hold for Retry-After, the end of
 * a probe from nothing, a return to the plateau, the rate a probe reached noted, or nothing. It keeps the
 * little memory a verdict needs: the fleet's refusals of the last while and the Retry-After of the 429s
 * this process heard.
 */
export class FleetVerdicts {
  /** The fleet's refusals in all, at the last cut or return to the plateau. */
  #refusedAtStart = 0;
  /** The fleet's refusals in all as the budget's replies of late said them. */
  readonly #fleetRefusals: { at: number; refused: number }[] = [];
  /** The Retry-After of the 429s this process heard lately (ms, capped). */
  readonly #retryAfters: { at: number; ms: number }[] = [];

  constructor(
    private readonly settings: RateSettings,
    private readonly refusals: RefusalFloor,
    /** The longest Retry-After honoured (RETRY_AFTER_CAP_MS). */
    private readonly retryAfterCapMs: number,
  ) {}

  /** A 429 this process heard at `now` (its clock), asking to wait `retryAfterMs` (undefined: not said). */
  heard(now: number, retryAfterMs: number | undefined): void {
    this.#retryAfters.push({ at: now, ms: Math.min(retryAfterMs ?? 0, this.retryAfterCapMs) });
    while ((this.#retryAfters[0]?.at ?? now) < now - RETRY_AFTER_WINDOW_MS) this.#retryAfters.shift();
  }

  /** A cut or a return to the plateau was written: refusals count from the fleet's `refused` in all. */
  restarted(refused: number): void {
    this.#refusedAtStart = refused;
  }

  /**
   * The verdict on `reply` for the learned rate `state`; `sentPerSec` is what the fleet sent lately and
   * `heldUntil` the hold in force (the server's ms). Undefined: nothing to write.
   */
  judge(state: RateState, reply: BudgetReply, sentPerSec: number, heldUntil: number): Verdict | undefined {
    if (this.refusals.overCapacity(state.max)) {
      const next = onThrottled(state, reply.now, this.settings, sentPerSec, this.refusals.capacity());
      // Every refused request waits its own Retry-After. The whole fleet waits too when the service
      // refuses most of what it is sent (a quota spent, an overload): the median Retry-After of the 429s
      // of late, since refusals given at any rate may ask for longer than those for capacity. A fleet held
      // for every overshoot of a probe would stop for a second each time a service says "Retry-After: 1".
      const waits = this.#retryAfters.map((r) => r.ms).sort((a, b) => a - b);
      const hold = this.refusals.judged().share > 1 - HOLD_BELOW_SHARE ? (waits[waits.length >> 1] ?? 0) : 0;
      if (next === undefined && !(hold > 0 && reply.now + hold > heldUntil)) return undefined;
      this.#retryAfters.length = 0;
      return { next, holdMs: hold };
    }
    // Refusals of the whole fleet in the last half second beyond those the service gives at any rate,
    // before enough answers are whole to judge them: back to the plateau, or, probing from nothing, down
    // to beta of SLOW_START_EXIT of what the fleet sent (as TCP leaves slow start), while the answers come
    // in. Probing from nothing the rate doubles every quarter second, so the first few refusals end it:
    // waiting for those beyond a prior floor of random refusals let it reach twice the capacity first (a
    // third of a night's refusals). A service that refuses at random ends it early and low; the curve
    // climbs from there.
    const recent = this.#recentRefusals(reply);
    if (state.max <= 0) {
      if (recent < SOFT_REFUSALS) return written(onProbeReached(state, reply.sentPerSec, this.settings));
      const rate = rateAt(state, reply.now, this.settings, sentPerSec);
      // of what the fleet sent: the curve runs up to twice ahead of it
      const sent = SLOW_START_EXIT * Math.min(rate, reply.sentPerSec);
      return written(onThrottled(state, reply.now, this.settings, sentPerSec, sent));
    }
    const sent = (reply.sentPerSec * SOFT_WINDOW_MS) / 1000;
    const expected = this.refusals.floor * sent;
    // Until the floor is learned from several samples it may be 0 for a service that refuses at random:
    // refusals must then also stand a share above it. Once learned, chance alone is the margin, so a probe
    // past the plateau ends after a few refusals instead of a dozen.
    const margin = this.refusals.learned ? 0 : this.refusals.excess * sent;
    const beyond = Math.max(0.5 * expected + 3 * Math.sqrt(expected), margin);
    if (recent < SOFT_REFUSALS + expected + beyond) return undefined;
    return written(onRefusedPastPlateau(state, reply.now, this.settings, sentPerSec));
  }

  /** The fleet's refusals in the last SOFT_WINDOW_MS, since the last cut or return to the plateau. */
  #recentRefusals(reply: BudgetReply): number {
    const seen = this.#fleetRefusals;
    seen.push({ at: reply.now, refused: reply.refused });
    while (seen.length > 1 && (seen[0]?.at ?? reply.now) < reply.now - SOFT_WINDOW_MS) seen.shift();
    const since = Math.max(seen[0]?.refused ?? reply.refused, this.#refusedAtStart);
    return reply.refused - since;
  }
}

function written(next: RateState | undefined): Verdict | undefined {
  return next === undefined ? undefined : { next, holdMs: 0 };
}
