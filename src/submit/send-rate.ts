/**
 * The fleet's sending rate, learned from the service's answers (pure: every function takes the time).
 *
 * The state is shared by every process of a deployment (kept in Redis beside the queue), so the rate is a
 * function of time since the last event rather than something each answer nudges: every process computes
 * the same rate from the same state, and only the rare events (a cut, latency well above its floor, a
 * restart) write it.
 *
 * - Probing (no capacity known yet): the rate doubles every `probeDoublingMs`, from `startRate`.
 * - A cut (429s that speak of capacity): the service's capacity is estimated from what it accepted of
 *   what the fleet sent (src/submit/refusal-floor.ts); that estimate becomes the plateau (`max`), and the
 *   rate goes to `beta` of it. The curve is then a cubic in time (CUBIC, RFC 9438, scaled to `max` so it
 *   behaves alike at 10/s and 10,000/s): back at the plateau after `recoverMs`, flat around it, then
 *   rising ever faster, so a capacity that rose is found: three times it in under four `recoverMs`, ten
 *   times in under six.
 * - Latency well above its floor past the plateau plateaus the curve where it is (`max` = the rate now):
 *   the increase slows before the next 429.
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
  /** The plateau: the capacity estimated at the last cut (or a latency plateau); 0 while probing from the start. */
  readonly max: number;
  /** When the service last refused for capacity and has accepted nothing since (epoch ms); 0: it accepts. */
  readonly refusingSince: number;
  /** The capacity estimated at the last cuts (at most ESTIMATES_KEPT, newest last). */
  readonly estimates?: readonly number[] | undefined;
  /** When the last cut was (epoch ms; absent before the first): answers to requests sent before it are not judged again. */
  readonly cutAt?: number | undefined;
  /** When refusals past the plateau last took the rate back to it (epoch ms). */
  readonly returnedAt?: number | undefined;
  /** Probing from nothing, the fleet's sending rate last noted (src/submit/send-rate.ts onProbeReached). */
  readonly reached?: number | undefined;
}

export interface RateSettings {
  /** SUBMIT_RATE_PER_SEC: the learned rate never exceeds it; 0: no ceiling. */
  readonly ceiling: number;
  /** SUBMIT_RATE_START: where probing starts with nothing learned. */
  readonly startRate: number;
  /** The share of the estimated capacity the rate goes to on a cut. */
  readonly beta: number;
  readonly probeDoublingMs: number;
  /** Time from a cut back to the plateau. */
  readonly recoverMs: number;
  /** At most one cut per this long (the processes of a fleet hear the same refusals). */
  readonly cutGuardMs: number;
  /** After this long without sending, the next pass resumes from the last learned rate with a probe. */
  readonly idleMs: number;
  /** The rate never goes below this (a service refusing everything is still asked now and then). */
  readonly minRate: number;
}

export const DEFAULT_RATE_SETTINGS: RateSettings = {
  ceiling: 0,
  startRate: 100,
  beta: 0.9,
  probeDoublingMs: 250,
  recoverMs: 1000,
  cutGuardMs: 100,
  idleMs: 30_000,
  minRate: 0.5,
};

/** No ceiling still has one: a rate no HTTP client reaches, so the arithmetic stays finite. */
const NO_CEILING = 1_000_000;

/** The most one cut takes off what was sent, whatever share of answers was refused. */
const LEAST_SHARE = 0.3;
/** Latency slows a probe only this far past the capacity last estimated. */
const CONGESTED_PAST = 1.1;
/** ... and then plateaus at this share of the rate. */
const CONGESTED_SHARE = 0.9;
/** Estimates of the capacity kept; the plateau is their median while they agree. */
const ESTIMATES_KEPT = 3;
/** An estimate this far from the plateau (as a share of it) says the capacity changed: it alone counts. */
const CHANGED = 0.25;
/** Probing from nothing, the rate the fleet reached is noted each time it is this many times the last noted. */
const PROBE_NOTED = 2;
/** Refusals past the plateau return the rate to it when the rate is at most this share above it. */
const RETURN_REACH = 0.3;

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
  return state.max * (1 + (1 - settings.beta) * ((elapsed - k) / k) ** 3);
}

/**
 * 429s that speak of capacity: the new state, or undefined when a cut happened within `cutGuardMs`.
 * `capacity` is what the service was seen to let through (src/submit/refusal-floor.ts), at most what the
 * fleet was sending and at least LEAST_SHARE of it; with the last estimates it makes the plateau, and the
 * rate goes to `beta` of it. After a drop to a third the first cut lands at the new capacity.
 */
export function onThrottled(
  state: RateState,
  now: number,
  settings: RateSettings,
  sentPerSec?: number,
  capacity?: number,
): RateState | undefined {
  const refusingSince = state.refusingSince === 0 ? now : state.refusingSince;
  if (state.max > 0 && now - state.at < settings.cutGuardMs) {
    return refusingSince === state.refusingSince
      ? undefined
      : { ...state, version: state.version + 1, refusingSince };
  }
  const sent = rateAt(state, now, settings, sentPerSec);
  const estimate = Math.max(
    settings.minRate,
    LEAST_SHARE * sent,
    Math.min(sent, capacity ?? LEAST_SHARE * sent),
  );
  // One sample estimates the capacity within a tenth or so; the plateau is the median of the last
  // estimates while they agree, and a new one alone when it says the capacity changed.
  const known = capacityOf(state);
  const kept = known > 0 && Math.abs(estimate - known) <= CHANGED * known ? (state.estimates ?? []) : [];
  const estimates = [...kept, estimate].slice(-ESTIMATES_KEPT);
  const plateau = median(estimates);
  return {
    version: state.version + 1,
    rate: clampRate(Math.min(plateau, estimate) * settings.beta, settings),
    at: now,
    max: clampRate(plateau, settings),
    refusingSince,
    estimates,
    cutAt: now,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * Refusals while probing past the plateau, before enough answers came back to judge them: back to the
 * plateau (the capacity estimated at the last cuts) at once, the curve's flat point, rather than on up
 * while the sample fills. Only within RETURN_REACH of the plateau: a rate far above it has found a
 * capacity that rose, and the cut that follows estimates it. Undefined when there is nothing to do. (A
 * return that lifted the plateau to 0.9 of the rate the refusals came at ratcheted it above a low
 * capacity, where refusals are noticed late, and held the fleet past it for seconds.)
 */
export function onRefusedPastPlateau(
  state: RateState,
  now: number,
  settings: RateSettings,
  sentPerSec?: number,
): RateState | undefined {
  const capacity = capacityOf(state);
  const elapsed = now - state.at;
  if (capacity <= 0 || elapsed <= settings.recoverMs + settings.cutGuardMs) return undefined;
  if (rateAt(state, now, settings, sentPerSec) > (1 + RETURN_REACH) * capacity) return undefined;
  return {
    ...state,
    version: state.version + 1,
    rate: capacity,
    at: now - settings.recoverMs,
    max: capacity,
    returnedAt: now,
  };
}

/** The capacity as the last cuts estimated it (0: none yet). */
export function capacityOf(state: RateState): number {
  return state.estimates === undefined || state.estimates.length === 0 ? 0 : median(state.estimates);
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
  // Only past the plateau: below it the rate is where a cut put it, under the capacity. Nor the first
  // probe, before any capacity was seen: latency then also rises with the relay's own load (a busy host,
  // a slow event loop), and plateauing on it held an unlimited service to a crawl.
  const elapsed = now - state.at;
  if (state.max <= 0 || elapsed <= settings.recoverMs) return undefined;
  const current = rateAt(state, now, settings, sentPerSec);
  // Near the capacity last seen latency is high anyway (the service's queue is full there); only a probe
  // well past it is slowed.
  if (current < CONGESTED_PAST * capacityOf(state)) return undefined;
  // The service queues: the rate is near its capacity or past it already (latency lags the load), so the
  // plateau is set a little under the rate now.
  const plateau = clampRate(CONGESTED_SHARE * current, settings);
  return { ...state, version: state.version + 1, rate: plateau, at: now - settings.recoverMs, max: plateau };
}

/**
 * Probing from nothing, the fleet reached `sentPerSec`: at twice the rate last noted (or more), the new state
 * notes it (`reached`), so that the next night, after a pause, probes on from it rather than from the start.
 * Undefined when there is nothing to note: a handful of writes a night, one per doubling.
 */
export function onProbeReached(
  state: RateState,
  sentPerSec: number,
  settings: RateSettings,
): RateState | undefined {
  const noted = state.reached ?? state.rate;
  if (state.max > 0 || state.refusingSince !== 0 || sentPerSec < PROBE_NOTED * noted) return undefined;
  return { ...state, version: state.version + 1, reached: clampRate(sentPerSec, settings) };
}

/**
 * A pass starting after a pause (`idleMs` without sending): start from the last learned rate, not from
 * scratch, a little below it, and probe back up within `recoverMs`, since the capacity may have changed.
 * A fleet that never met a limit probes on from the rate it last reached (as `onProbeReached` noted it).
 */
export function onResume(
  state: RateState,
  lastSentAt: number,
  now: number,
  settings: RateSettings,
): RateState | undefined {
  if (lastSentAt === 0 || now - lastSentAt < settings.idleMs) return undefined;
  if (state.max <= 0) {
    const reached = Math.max(state.rate, state.reached ?? 0);
    return {
      ...state,
      version: state.version + 1,
      rate: clampRate(reached * settings.beta, settings),
      at: now,
    };
  }
  const learned = Math.min(state.max, rateAt(state, lastSentAt, settings));
  return {
    ...state,
    version: state.version + 1,
    rate: clampRate(learned * settings.beta, settings),
    at: now,
    max: clampRate(learned, settings),
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
