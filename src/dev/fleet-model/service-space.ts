import type { Capacity } from "../../simulator/capacity.js";
import type { NightOptions, NightOutcome } from "./night.js";

/**
 * A service drawn from the space the learned rate is judged over, every axis independent: its token
 * bucket, how it refuses and says its wait, quota windows, answer times, refusals that are not about the
 * rate, outages, a change mid-night, and the fleet. bench/capacity-space.ts draws them (fast-check).
 */
export interface ServiceSpec {
  /** Requests per second, and the bucket's burst (requests). */
  readonly capacity: number;
  readonly burst: number;
  readonly refuseWith: 429 | 503;
  /** How a refusal says its wait; `fixed`: always `fixedSeconds`. */
  readonly retryAfter: "whole" | "none" | "zero" | "decimal" | "date" | "fixed";
  readonly fixedSeconds: number;
  readonly clockSkewMs: number;
  /** Quota windows besides the bucket: limit per window of `seconds`, fixed to the clock or sliding. */
  readonly windows: readonly { readonly limit: number; readonly seconds: number; readonly fixed: boolean }[];
  readonly latency: "constant" | "uniform" | "long-tail";
  readonly latencyMs: number;
  /** Answers twenty times as long for a stretch of the night. */
  readonly latencyJump: boolean;
  /** A share of requests refused whatever the rate (429, with `Retry-After: 1` or bare), and of 503s. */
  readonly randomRefused: number;
  readonly randomBare: boolean;
  readonly outages: number;
  readonly change: "none" | "drop" | "rise" | "zero";
  readonly dropBy: number;
  readonly processes: number;
  readonly deployments: 1 | 2;
}

/** A night at the service's capacity lasts about this long, so that the steady rate is what is judged. */
const NIGHT_S = 20;
/** Where a change comes, and a latency jump starts and ends, as shares of that night. */
const CHANGE_AT = 0.35;
const JUMP_UNTIL = 0.6;
/** A capacity of 0 for this long, then back (a service restarting). */
const ZERO_MS = 30_000;
/** SUBMIT_CONCURRENCY, the relay's default: requests in flight per process at most. */
export const MAX_CONCURRENCY = 512;

/** The long-run rate the service allows at `ms` into the night, before its refusals at random. */
export function allowedAt(spec: ServiceSpec, ms: number): number {
  const nightMs = NIGHT_S * 1000;
  let rate = spec.capacity;
  if (ms >= CHANGE_AT * nightMs) {
    if (spec.change === "drop") rate = spec.capacity / spec.dropBy;
    if (spec.change === "rise") rate = spec.capacity * 6;
    if (spec.change === "zero") rate = ms < CHANGE_AT * nightMs + ZERO_MS ? 0 : spec.capacity;
  }
  for (const w of spec.windows) rate = Math.min(rate, w.limit / w.seconds);
  // Little's law: the fleet's requests in flight over the mean answer time
  const jumped = spec.latencyJump && ms >= CHANGE_AT * nightMs && ms < JUMP_UNTIL * nightMs ? 20 : 1;
  const meanMs = (spec.latency === "uniform" ? spec.latencyMs / 2 : spec.latencyMs) * jumped + 3;
  const tail = spec.latency === "long-tail" ? 0.95 + 0.05 * 10 : 1;
  const inFlight = MAX_CONCURRENCY * spec.processes * spec.deployments;
  return Math.min(rate, (inFlight * 1000) / (meanMs * tail));
}

/** The night the fleet model runs for `spec`, of `mostInvoices` at most (a test's budget of model time). */
export function nightOf(spec: ServiceSpec, seed: number, mostInvoices = Infinity): NightOptions {
  const nightMs = NIGHT_S * 1000;
  const limit: Partial<Capacity> = {
    refuseWith: spec.refuseWith,
    maxInFlight: 1_000_000,
    ...(spec.windows.length > 0 && { windows: spec.windows.map((w) => ({ ...w })) }),
    ...(spec.retryAfter === "fixed" && { retryAfterSeconds: spec.fixedSeconds }),
  };
  const at = Math.round(CHANGE_AT * nightMs);
  const changes =
    spec.change === "drop"
      ? [{ atMs: at, patch: { ratePerSec: spec.capacity / spec.dropBy } }]
      : spec.change === "rise"
        ? [{ atMs: at, patch: { ratePerSec: spec.capacity * 6 } }]
        : spec.change === "zero"
          ? [
              { atMs: at, patch: { ratePerSec: 0 } },
              { atMs: at + ZERO_MS, patch: { ratePerSec: spec.capacity } },
            ]
          : [];
  const lowest = spec.latency === "constant" ? spec.latencyMs : 0;
  const { retryAfter } = spec;
  return {
    processes: spec.processes,
    deployments: spec.deployments,
    invoices: Math.min(
      mostInvoices,
      Math.max(50, Math.round(NIGHT_S * allowedAt({ ...spec, change: "none", latencyJump: false }, 0))),
    ),
    capacity: spec.capacity,
    burst: spec.burst,
    limit,
    latencyMs: { min: lowest, max: spec.latencyMs },
    latencyTail: spec.latency === "long-tail",
    ...(spec.latencyJump && { latencyJump: { atMs: at, untilMs: JUMP_UNTIL * nightMs, factor: 20 } }),
    changes,
    random429: spec.randomRefused,
    random429Bare: spec.randomBare,
    errors: spec.outages,
    retryAfter: retryAfter === "fixed" ? "whole" : retryAfter,
    clockSkewMs: spec.clockSkewMs,
    seed,
    limitMs: 3_600_000,
  };
}

/** What a night showed against what the service allowed. */
export interface Judged {
  readonly finished: boolean;
  /** Accepted over what the service allowed while the fleet had a second's work in hand, past the start. */
  readonly used: number;
  /** Refusals for capacity (not the random ones) per invoice. */
  readonly refusedPerInvoice: number;
  /** The longest stretch under half of what the service allowed while work was in hand (s). */
  readonly worstS: number;
  /** Each deployment's share of what the service accepted. */
  readonly shares: readonly number[];
  readonly seconds: number;
}

/** The first seconds are the probe from the start rate; a quota's first window is its burst. */
const START_S = 5;

/** What the judge reads of a night: the model's outcome, or one measured on the simulator. */
export type JudgedNight = Pick<
  NightOutcome,
  "startedAt" | "endedAt" | "routed" | "refused" | "perSecond" | "backlog" | "acceptedBy"
>;

export function judge(
  spec: ServiceSpec,
  night: Pick<NightOptions, "invoices">,
  outcome: JudgedNight,
): Judged {
  const first = Math.floor(outcome.startedAt / 1000);
  const admitted: number[] = [];
  for (const s of outcome.perSecond) if (s.second >= first) admitted[s.second - first] = s.admitted;
  const from = Math.max(START_S, ...spec.windows.map((w) => Math.ceil(w.seconds)));
  // a share of what the service admits is refused at random, or fails, and is sent again
  const kept = (1 - spec.randomRefused) * (1 - spec.outages);
  let [allowed, accepted, worst, under] = [0, 0, 0, 0];
  for (let i = from; i < outcome.backlog.length - 1; i++) {
    const rate = allowedAt(spec, i * 1000) * kept;
    if ((outcome.backlog[i] ?? 0) < rate || rate === 0) continue;
    const got = (admitted[i] ?? 0) * (1 - spec.randomRefused);
    allowed += rate;
    accepted += Math.min(got, rate);
    under = got < rate / 2 ? under + 1 : 0;
    worst = Math.max(worst, under);
  }
  const total = outcome.acceptedBy.reduce((a, b) => a + b, 0);
  return {
    finished: outcome.routed === night.invoices,
    used: allowed > 0 ? accepted / allowed : 1,
    refusedPerInvoice: outcome.refused / night.invoices,
    worstS: worst,
    shares: outcome.acceptedBy.map((n) => (total > 0 ? n / total : 0)),
    seconds: Math.round((outcome.endedAt - outcome.startedAt) / 1000),
  };
}

/** A service's row: whether it met the targets, the figures judged, and the service in a few words. */
export function serviceRow(spec: ServiceSpec, judged: Judged, met: boolean): string {
  const shares = judged.shares.map((s) => s.toFixed(2)).join("/");
  return (
    `${met ? "met " : "MISS"} used ${judged.used.toFixed(2)}  refused/inv ${judged.refusedPerInvoice.toFixed(3)}  ` +
    `under half ${judged.worstS} s  shares ${shares}  ${judged.seconds} s | ${describeService(spec)}`
  );
}

/** One line for a service: its axes in a few words. */
export function describeService(spec: ServiceSpec): string {
  const parts = [`${spec.capacity}/s burst ${spec.burst}`, `${spec.refuseWith}`, `RA ${spec.retryAfter}`];
  if (spec.retryAfter === "fixed") parts.push(`${spec.fixedSeconds}s`);
  if (spec.retryAfter === "date") parts.push(`skew ${spec.clockSkewMs}ms`);
  for (const w of spec.windows) parts.push(`${w.limit}/${w.seconds}s${w.fixed ? " fixed" : ""}`);
  parts.push(`${spec.latency} ${spec.latencyMs}ms${spec.latencyJump ? " ×20" : ""}`);
  if (spec.randomRefused > 0)
    parts.push(`${Math.round(spec.randomRefused * 100)}% random${spec.randomBare ? " bare" : ""}`);
  if (spec.outages > 0) parts.push(`${Math.round(spec.outages * 100)}% 503`);
  if (spec.change !== "none") parts.push(spec.change === "drop" ? `drop ÷${spec.dropBy}` : spec.change);
  parts.push(`${spec.processes}p×${spec.deployments}d`);
  return parts.join(", ");
}

/**
 * The targets (docs/capacity.md): ≥ 0.90 of what the service allows used, ≤ 0.05 refused for capacity per
 * invoice (≤ 0.10 with refusals at random), never under half of it for longer than 5 s, every invoice
 * routed, and of two deployments neither under 0.3 of what the service accepted.
 */
export function meetsTargets(spec: ServiceSpec, judged: Judged): boolean {
  const refused = spec.randomRefused > 0 || spec.outages > 0 ? 0.1 : 0.05;
  return (
    judged.finished &&
    judged.used >= 0.9 &&
    judged.refusedPerInvoice <= refused &&
    judged.worstS <= START_S &&
    judged.shares.every((share) => spec.deployments === 1 || share >= 0.3)
  );
}
