/**
 * The fleet's sending rate, learned from the service's answers (pure: every function takes the time).
 *
 * The state is shared by every process of a deployment (kept in Redis beside the queue), so the rate is a
 * function of time since the last event rather than something each answer nudges: every process computes
 * the same rate from the same state, and only the rare events (a 429, latency well above its floor, a
 * restart) write it.
 *
 * - Probing (no capacity known yet): the rate doubles every `probeDoublingMs`, from `startRate`.
 * - After a cut (a 429): the rate is cut to `beta` of what it was (`max`), then follows a cubic in
 *   time (CUBIC, RFC 9438, scaled to `max` so it behaves alike at 10/s and 10,000/s): back to `max` after
 *   `recoverMs`, flat around it, then rising faster, and probing again by doubling past `(2 - beta)·max`.
 * - Latency well above its floor while probing past a known plateau plateaus the curve where it is (`max`
 *   = the rate now, at the flat point): the increase slows before the next 429.
 * - It never exceeds `ceiling` (SUBMIT_RATE_PER_SEC) nor twice what the fleet really sent: a rate that was
 *   never used is not a rate the service accepted.
 * docs/capacity.md has the measurements behind the constants.
 */
export interface RateState {
  /** Bumped by every write; a write says which version it was computed from (compare-and-set). */
  readonly version: number;
  /** Requests per second at `at`. */
  readonly rate: number;
  /** When the curve starts (epoch ms). */
  readonly at: number;
  /** The plateau: the rate of the last cut (or latency plateau); 0 while probing from the start. */
  readonly max: number;
  /** When the service last refused for capacity and has accepted nothing since (epoch ms); 0: it accepts. */
  readonly refusingSince: number;
}

export interface RateSettings {
  /** SUBMIT_RATE_PER_SEC: the learned rate never exceeds it; 0: no ceiling. */
  readonly ceiling: number;
  /** SUBMIT_RATE_START: where probing starts with nothing learned. */
  readonly startRate: number;
  /** The share kept on a cut. */
  readonly beta: number;
  readonly probeDoublingMs: number;
  /** Time from a cut back to the plateau. */
  readonly recoverMs: number;
  /** Answers to requests sent before a cut still come back refused: one cut per this long. */
  readonly cutGuardMs: number;
  /** After this long without sending, the next pass resumes from the last learned rate with a probe. */
  readonly idleMs: number;
  /** The rate never goes below this (a service refusing everything is still asked now and then). */
  readonly minRate: number;
}

export const DEFAULT_RATE_SETTINGS: RateSettings = {
  ceiling: 0,
  startRate: 100,
  beta: 0.8,
  probeDoublingMs: 250,
  recoverMs: 1500,
  cutGuardMs: 400,
  idleMs: 30_000,
  minRate: 0.5,
};

/** No ceiling still has one: a rate no HTTP client reaches, so the arithmetic stays finite. */
const NO_CEILING = 1_000_000;

/** The most one cut takes off what was sent, whatever share of answers was refused. */
const LEAST_SHARE = 0.3;

export type RatePhase = "probing" | "holding" | "backing-off";

export function initialRateState(settings: RateSettings, now: number): RateState {
  return { version: 0, rate: clampRate(settings.startRate, settings), at: now, max: 0, refusingSince: 0 };
}

/**
 * The rate at `now`. `sentPerSec` is what the fleet really sent over the last second (undefined: not
 * known); the rate stays within twice it (and at least `startRate`).
 */
export function rateAt(state: RateState, now: number, settings: RateSettings, sentPerSec?: number): number {
  const curve = curveAt(state, now, settings);
  const used = sentPerSec === undefined ? Infinity : Math.max(2 * sentPerSec, settings.startRate, state.rate);
  return clampRate(Math.min(curve, used), settings);
}

function curveAt(state: RateState, now: number, settings: RateSettings): number {
  const elapsed = Math.max(0, now - state.at);
  if (state.max <= 0) return state.rate * 2 ** (elapsed / settings.probeDoublingMs);
  const k = settings.recoverMs;
  const c = 1 - settings.beta;
  if (elapsed <= 2 * k) return state.max * (1 + c * ((elapsed - k) / k) ** 3);
  // Past the cubic's reach without a refusal: the capacity rose; find it by doubling again.
  return state.max * (1 + c) * 2 ** ((elapsed - 2 * k) / settings.probeDoublingMs);
}

/**
 * A 429: the new state, or undefined when a cut happened within `cutGuardMs` (the answer is to a
 * request sent before it). The rate cut from is the least of the curve, what the fleet sent
 * (`sentPerSec`), and what the service accepted of it (`acceptedShare` of the recent answers, 0–1): after
 * a drop to a third, the first cut lands near the new capacity instead of a fifth below the old one.
 */
export function onThrottled(
  state: RateState,
  now: number,
  settings: RateSettings,
  sentPerSec?: number,
  acceptedShare = 1,
): RateState | undefined {
  const refusingSince = state.refusingSince === 0 ? now : state.refusingSince;
  if (state.max > 0 && now - state.at < settings.cutGuardMs) {
    return refusingSince === state.refusingSince
      ? undefined
      : { ...state, version: state.version + 1, refusingSince };
  }
  const curve = rateAt(state, now, settings, sentPerSec);
  const sent = sentPerSec === undefined || sentPerSec <= 0 ? curve : Math.min(curve, sentPerSec);
  // A share from a handful of answers says little: one cut takes at most this much off.
  const current = Math.max(settings.minRate, sent * Math.min(1, Math.max(LEAST_SHARE, acceptedShare)));
  // Cut again below the last plateau: the capacity fell; the next plateau is set lower still (CUBIC's fast
  // convergence), so the curve does not climb straight back to where it was refused.
  const max = state.max > 0 && current < state.max ? (current * (1 + settings.beta)) / 2 : current;
  return {
    version: state.version + 1,
    rate: clampRate(current * settings.beta, settings),
    at: now,
    max: clampRate(max, settings),
    refusingSince,
  };
}

/** An accepted request while the service was marked refusing: it accepts again (the only other write). */
export function onAccepted(state: RateState): RateState | undefined {
  return state.refusingSince === 0 ? undefined : { ...state, version: state.version + 1, refusingSince: 0 };
}

/** Latency well above its floor: hold the curve flat at the rate now, so it rises slowly from here. */
export function onCongested(
  state: RateState,
  now: number,
  settings: RateSettings,
  sentPerSec?: number,
): RateState | undefined {
  // Only the doubling is slowed (probing from nothing, or past the cubic's reach): the cubic is slow
  // near its plateau already, and plateauing it again and again would stall it on noisy latency.
  // Nor the first probe, before any capacity was seen: latency then also rises with the relay's own load
  // (a busy host, a slow event loop), and plateauing on it held an unlimited service to a crawl.
  const elapsed = now - state.at;
  if (state.max <= 0 || elapsed <= 2 * settings.recoverMs) return undefined;
  const current = rateAt(state, now, settings, sentPerSec);
  return { ...state, version: state.version + 1, rate: current, at: now - settings.recoverMs, max: current };
}

/**
 * A pass starting after a pause (`idleMs` without sending): start from the last learned rate, not from
 * scratch, a little below it, and probe back up within `recoverMs`, since the capacity may have changed.
 */
export function onResume(
  state: RateState,
  lastSentAt: number,
  now: number,
  settings: RateSettings,
): RateState | undefined {
  if (lastSentAt === 0 || now - lastSentAt < settings.idleMs) return undefined;
  const learned = state.max > 0 ? Math.min(state.max, rateAt(state, lastSentAt, settings)) : state.rate;
  return {
    version: state.version + 1,
    rate: clampRate(learned * settings.beta, settings),
    at: now,
    max: clampRate(learned, settings),
    refusingSince: state.refusingSince,
  };
}

export function phaseAt(state: RateState, now: number, heldUntil: number, settings: RateSettings): RatePhase {
  if (now < heldUntil) return "backing-off";
  if (state.max <= 0) return "probing";
  const elapsed = now - state.at;
  if (elapsed < settings.recoverMs) return "backing-off";
  return elapsed <= 2 * settings.recoverMs ? "holding" : "probing";
}

/** Milliseconds between two requests of the fleet at `rate`: the budget spaces them evenly. */
export function spacingMs(rate: number): number {
  return 1000 / rate;
}

/**
 * Requests one process needs in flight to send at `rate` when answers take `latencyMs` (Little's law),
 * doubled for the variation of latency, within [1, max].
 */
export function concurrencyFor(rate: number, latencyMs: number, max: number): number {
  return Math.max(1, Math.min(max, Math.ceil((2 * rate * latencyMs) / 1000) + 1));
}

function clampRate(rate: number, settings: RateSettings): number {
  const ceiling = settings.ceiling > 0 ? settings.ceiling : NO_CEILING;
  return Math.min(ceiling, Math.max(settings.minRate, rate));
}
