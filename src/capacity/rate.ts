import { z } from "zod";
import { LATELY_MS } from "../ledger/send-budget.js";

/** The learned rate's policy, pure: every function takes the time (src/capacity/index.ts has the words).
 * Every process computes the same rate from the shared state; only events (cut, hold, resume) write it. */

/** The share of the service's accepted rate a cut goes to (CUBIC's β, RFC 9438 §4.6). The plateau is a
 * measurement (what the service accepted), not a guess, so the cut only has to drain the service's queue;
 * and refusals below 1 − β of the answers cost less than a cut would: they are chance, not capacity. */
export const BETA = 0.9;
/** The time from a cut back to the plateau (CUBIC's K); after a hold, the cycle's length: the service
 * showed its long-run rate over that time, so it is probed past no faster. Latency's window too, beyond
 * any round trip: a stored time further ahead was written by a clock that stepped back, or by no pacer. */
export const RECOVER_MS = 1000;
/** Round trips from a cut back to the plateau at least: the curve's K, counted in what the fleet can hear
 * (a cut is judged once per round trip; CUBIC's K spans several). */
export const FEEDBACKS = 4;
/** The lowest rate: a service refusing everything is still asked now and then. */
export const MIN_RATE = 0.5;
/** After this long without sending, a pass starts again from the last learned rate, a cut below it. */
export const IDLE_MS = 30_000;
/** Slow start past the plateau a returning service last showed grows by a quarter per window, not twice
 * (HyStart++'s conservative slow start, RFC 9406 §4.3): it limited the fleet near there before. */
export const CAUTIOUS_GROWTH = 1.25;
/** No ceiling still has one: a rate no HTTP client reaches, so the arithmetic stays finite. */
const NO_CEILING = 1_000_000;

const [positive, count] = [z.number().positive(), z.number().nonnegative()];
const unset = count.default(0); // written by later versions: a state stored before reads them as none
const COUNTS = ["at", "max", "atAccepted", "atRefused", "markAt", "markAccepted", "refusingSince"] as const;
/** `at` the last event (the curve's start), `max` the plateau (0: none yet), `k` the curve's K, the fleet's
 * counts at the last event (`at…`) and at the cycle's start (`mark…`: the pass's, or the last hold's end),
 * since when it refuses all, the `threshold` past which slow start grows cautiously (the plateau last
 * measured; 0: none), and the pass's cuts, `under` the plateau of them (for operators: speed-limit.ts). */
type Counted = Record<(typeof COUNTS)[number], typeof count>;
const stateSchema = z.object({
  ...(Object.fromEntries(COUNTS.map((name) => [name, count])) as Counted),
  version: z.number().int().nonnegative(),
  ...{ rate: positive, k: positive, threshold: unset, cuts: unset, under: unset },
});

/** The learned rate's state, as the budget stores it (JSON). */
export type RateState = z.output<typeof stateSchema>;

export interface RateSettings {
  /** SUBMIT_RATE_PER_SEC: the rate never exceeds it; 0: no ceiling. */
  readonly ceiling: number;
  /** SUBMIT_RATE_START: the first rate with nothing learned. */
  readonly startRate: number;
  /** RETRY_AFTER_CAP_MS: the longest hold honoured. */
  readonly retryAfterCapMs: number;
}

/** What the budget says of the fleet (src/ledger/send-budget.ts): the answers per second lately, and in all. */
export type Fleet = Readonly<Record<"acceptedPerSec" | "refusedPerSec" | "accepted" | "refused", number>>;

export type RatePhase = "probing" | "holding" | "backing-off";
type Counts = Pick<Fleet, "accepted" | "refused">;

/** Refusals for capacity not yet judged: the latest send time among them, dated back an answer time and
 * the budget's window (`sentAt`) and not (`wentAt`), the least Retry-After (Infinity: none asked), and the
 * slowest answer lately (`roundTripMs`: a round trip, the time the fleet hears what its rate did). */
export type Refusal = Readonly<Record<"sentAt" | "wentAt" | "retryAfterMs" | "roundTripMs", number>>;

/**
 * The stored state, checked: undefined when it is no state a pacer could have written at `now` with the
 * fleet held until `heldUntil` (a hold's state is dated at the hold's end).
 */
export function parseRateState(text: string, now: number, heldUntil = 0): RateState | undefined {
  let s: RateState;
  try {
    s = stateSchema.parse(JSON.parse(text));
  } catch {
    return undefined; // not JSON, or not a state
  }
  // times are on the server's clock as processes estimate it, off by a round trip at most
  const latest = Math.max(now, heldUntil) + RECOVER_MS;
  return Math.max(s.at, s.markAt) > latest || s.refusingSince > now + RECOVER_MS ? undefined : s;
}

/** An event at `now` (the curve starts there), with the fleet's counts then; and a cycle's start. */
const eventAt = (now: number, f: Counts) => ({ at: now, atAccepted: f.accepted, atRefused: f.refused });
const cycleAt = (now: number, f: Counts) => ({ markAt: now, markAccepted: f.accepted });

/** Nothing learned: slow start from the start rate. */
export function startState(settings: RateSettings, now: number, fleet: Counts, version = 0): RateState {
  const fresh = { version, rate: clamp(settings.startRate, settings), max: 0, k: RECOVER_MS, threshold: 0 };
  return { ...fresh, refusingSince: 0, cuts: 0, under: 0, ...eventAt(now, fleet), ...cycleAt(now, fleet) };
}

/**
 * The rate at `now`. No plateau yet (slow start): twice what the service accepted lately, as TCP's slow
 * start sends two for every acknowledgement, so a probe is never more than twice the capacity; doubling
 * while that stays under the threshold, then a quarter more at a time. With a plateau, CUBIC's curve:
 * from the cut rate up to the plateau (concave, K), then past it (convex), so a capacity that rose is
 * found. Never above twice the accepted rate (a rate the service never took is not one it accepts), nor
 * below the stored rate, within [MIN_RATE, ceiling].
 */
export function rateAt(state: RateState, now: number, settings: RateSettings, fleet: Fleet): number {
  const [a, threshold] = [fleet.acceptedPerSec, state.max > 0 ? 0 : state.threshold];
  const grown = threshold > 0 ? Math.min(2 * a, Math.max(threshold, CAUTIOUS_GROWTH * a)) : 2 * a;
  const used = Math.max(state.rate, grown);
  if (state.max <= 0) return clamp(used, settings);
  const t = Math.max(0, now - state.at);
  const curve =
    t < state.k
      ? state.max - Math.max(0, state.max - state.rate) * ((state.k - t) / state.k) ** 3
      : state.max * (1 + (1 - BETA) * ((t - state.k) / state.k) ** 3);
  return clamp(Math.min(curve, used), settings);
}

/**
 * Refusals (429, or 503 with Retry-After) judged at `now` on the fleet's answers: the new state and the
 * hold, or undefined when they say nothing new. Once per round trip (a request sent before the last event
 * was refused at the old rate), and only past chance. A Retry-After says when the refused request may go
 * again (the worker waits it for that request); the whole fleet waits only when the service refuses
 * everything since the last event, at a rate already cut: then for the least wait asked. Else a cut: β of
 * what the service accepted, the plateau.
 */
export function onRefused(
  state: RateState,
  { sentAt, wentAt, retryAfterMs, roundTripMs }: Refusal,
  fleet: Fleet,
  now: number,
  settings: RateSettings,
) {
  // it accepted less than the share 1 − β chance refuses, lately or since the last event (two refusals or
  // more: past chance at any count; a quarter second at a low rate may hold fewer): it refuses everything
  const [gotSince, refusedSince] = [fleet.accepted - state.atAccepted, fleet.refused - state.atRefused];
  const dark = refusedSince > 1 && gotSince <= (1 - BETA) * (gotSince + refusedSince);
  const { acceptedPerSec: accepts, refusedPerSec: refuses } = fleet;
  const refusingSince = accepts > (1 - BETA) * (accepts + refuses) && !dark ? 0 : state.refusingSince || now;
  const hold = dark && retryAfterMs > 0 && Number.isFinite(retryAfterMs);
  // a hold is asked for in so many words: any refusal of a request sent since the last event asks it
  if ((hold ? wentAt : sentAt) < state.at || !(dark || pastChance(fleet))) return undefined;
  const current = rateAt(state, now, settings, fleet);
  const version = state.version + 1;
  if (hold) {
    const holdMs = Math.min(retryAfterMs, settings.retryAfterCapMs);
    // the cycle ends: what the service accepted since it began, over the time to the hold's end, is the
    // rate it allows in the long run (a quota window: 300 a minute is 5/s), the plateau; the curve comes
    // back to it and probes past it on the cycle's time scale (K)
    const end = now + holdMs;
    // never above the plateau last measured: the cycle may hold a faster past (the capacity dropped)
    const mean = ((fleet.accepted - state.markAccepted) * 1000) / Math.max(1, end - state.markAt);
    const longRun = state.max > 0 ? Math.min(mean, state.max) : mean;
    const k = Math.max(RECOVER_MS, end - state.markAt);
    const held = { ...state, version, k, ...eventAt(end, fleet), ...cycleAt(end, fleet) };
    const rate = clamp(longRun, settings);
    if (longRun > 0)
      return { state: { ...held, rate, max: rate, threshold: rate, refusingSince: 0 }, holdMs };
    // nothing accepted since: one request per wait asked, as the service said, until one is (onAccepted)
    const wait = clamp(Math.max(1000 / Math.max(1, holdMs), BETA * Math.min(current, accepts)), settings);
    return { state: { ...held, rate: wait, refusingSince }, holdMs };
  }
  // the lower of the accepted rate lately (a quarter second holds a bucket's burst) and since the last
  // cut (its long-run rate), each the least its count allows: n paced requests in a span
  // show n − 1 per span at least (the first may open it, the last close it), never less than a cut's β n
  const least = (n: number, ms: number) => (Math.max(n - 1, BETA * n) * 1000) / ms;
  const since = state.max > 0 && now > state.at;
  const cycle = since ? least(fleet.accepted - state.atAccepted, now - state.at) : Infinity;
  const accepted = Math.min(least((fleet.acceptedPerSec * LATELY_MS) / 1000, LATELY_MS), cycle);
  const max = accepted > 0 ? clamp(accepted, settings) : state.max;
  // out of slow start, no higher than the rate it last saw accepted (the quarter second it measured may end
  // with a bucket's burst, drained at twice the rate) nor under half the accepted rate (it sends twice that)
  const fit = state.max > 0 ? Infinity : Math.max(state.rate, accepted / 2);
  const cut = clamp(BETA * Math.min(accepted, current, fit), settings);
  // a cut out of the night's slow start or once the curve got back to its plateau measured the capacity
  // (if it saw any accepted); one sooner, or out of a return's slow start, may measure a service failing
  const [first, back] = [state.max <= 0 && state.threshold <= 0, now - state.at >= state.k];
  const threshold = accepted > 0 && (first || back) ? max : state.threshold;
  // one before: refused at a rate the service accepted, which refusals about the rate never are
  const tally = { cuts: state.cuts + 1, under: state.under + (state.max > 0 && !back ? 1 : 0) };
  // back at the plateau no sooner than the fleet hears what the rate does there, FEEDBACKS round trips on
  const k = Math.max(RECOVER_MS, FEEDBACKS * roundTripMs);
  const next = { ...state, ...tally, version, rate: cut, max, threshold, k, refusingSince };
  return { state: { ...next, ...eventAt(now, fleet) }, holdMs: 0 };
}

/**
 * Whether the refusals lately are more than chance: a service refusing a share 1 − β at random (below
 * what a cut costs) would give that many of the answers lately less often than 1 − β of the time.
 * Two refusals out of two speak; one out of one does not; 5 % refused at random never does.
 */
export function pastChance(fleet: Fleet): boolean {
  const lately = (perSec: number) => Math.round((perSec * LATELY_MS) / 1000);
  const [refused, n] = [lately(fleet.refusedPerSec), lately(fleet.refusedPerSec + fleet.acceptedPerSec)];
  return refused > 0 && atLeast(n, refused, 1 - BETA) < 1 - BETA;
}

/** The binomial tail P(X ≥ k) of n tries at p (k ≤ n + 1), summed in logs so that thousands stay finite. */
export function atLeast(n: number, k: number, p: number): number {
  let [log, below] = [n * Math.log(1 - p), 0];
  for (let i = 0; i < k; i++) {
    below += Math.exp(log);
    log += Math.log((n - i) / (i + 1)) + Math.log(p / (1 - p));
  }
  return 1 - below;
}

/**
 * An answer accepted at `now` to a request sent (`sentAt`, the server's clock) since the service refused
 * everything: it accepts again, at a capacity not known yet: slow start from a cut below the plateau, up
 * to the threshold, the plateau last measured (as TCP after a timeout: from low, up to ssthresh).
 */
export function onAccepted(
  state: RateState,
  [sentAt, now]: readonly [number, number],
  fleet: Counts,
  settings: RateSettings,
) {
  if (state.refusingSince === 0 || sentAt < state.refusingSince) return undefined;
  const rate = state.max > 0 ? clamp(BETA * state.max, settings) : state.rate;
  const back = { version: state.version + 1, rate, max: 0, k: RECOVER_MS, refusingSince: 0 };
  return { ...state, ...back, threshold: state.threshold || state.max, ...eventAt(now, fleet) };
}

/**
 * Slow start noted: the service accepted twice the stored rate, which becomes the accepted rate, so a
 * night that ends before any limit resumes from it (a handful of writes a night, one per doubling).
 */
export function onProbed(state: RateState, fleet: Fleet, settings: RateSettings): RateState | undefined {
  if (state.max > 0 || fleet.acceptedPerSec < 2 * state.rate) return undefined;
  return { ...state, version: state.version + 1, rate: clamp(fleet.acceptedPerSec, settings) };
}

/**
 * The first call of a pass IDLE_MS or more after the fleet last sent (`seen`): from the last learned
 * rate, a cut below it (the capacity may have changed meanwhile), back up within RECOVER_MS.
 */
export function onResume(state: RateState, seen: number, now: number, fleet: Fleet, settings: RateSettings) {
  if (seen === 0 || now - seen < IDLE_MS) return undefined;
  // the curve as it stood when the fleet last sent (what was accepted then is not known now)
  const idle = { ...fleet, acceptedPerSec: Infinity, refusedPerSec: 0 };
  const learned = state.max > 0 ? Math.min(state.max, rateAt(state, seen, settings, idle)) : state.rate;
  const [rate, max] = [clamp(BETA * learned, settings), state.max > 0 ? clamp(learned, settings) : 0];
  const fresh = { version: state.version + 1, rate, max, k: RECOVER_MS, cuts: 0, under: 0 };
  return { ...state, ...fresh, ...eventAt(now, fleet), ...cycleAt(now, fleet) };
}

/**
 * What the rate is doing, for operators: held by the service (a hold, or climbing back after a cut),
 * finding its speed, or at it: from K to 2K after an event the curve stays within 1 − β of the plateau.
 */
export function phaseAt(state: RateState, now: number, heldUntil: number): RatePhase {
  if (now < heldUntil) return "backing-off";
  if (state.max <= 0) return "probing";
  const t = now - state.at;
  return t < state.k ? "backing-off" : t <= 2 * state.k ? "holding" : "probing";
}

/**
 * Requests in flight the learned rate needs (Little's law: rate × time in flight), with the slowest
 * answer lately as the time, since no request is in flight longer; at least one.
 */
export function concurrencyFor(ratePerSec: number, slowestMs: number): number {
  return Math.max(1, Math.ceil((ratePerSec * slowestMs) / 1000));
}

function clamp(value: number, settings: RateSettings): number {
  const ceiling = settings.ceiling > 0 ? settings.ceiling : NO_CEILING;
  return Math.min(ceiling, Math.max(MIN_RATE, value));
}
