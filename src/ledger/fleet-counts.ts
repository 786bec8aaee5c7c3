import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * What the fleet's processes count of their requests, kept in Redis so that it outlives them
 * (docs/operations.md, "Metrics"): totals since the deployment began (requests sent, answers by class,
 * retries by reason, final answers by status) and the answers per second (accepted, refused for capacity,
 * other), from which a pass's chart is drawn. A request is counted before it is sent (sent-count.ts), each
 * answer in the write that records it (answers.lua, refused-attempt.lua): a process killed at any moment
 * leaves no request the service may have seen uncounted, and no answer recorded and uncounted.
 */

/** Answer classes of requests (`network`: no answer at all). */
export const ANSWER_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx", "network"] as const;
/** Why an answer is worth another attempt (src/submit/attempt-labels.ts names the same). */
export const RETRY_CAUSES = [
  "throttled",
  "server_error",
  "timeout",
  "network",
  "in_flight",
  "too_early",
] as const;
/** The final statuses a submission worker writes. */
export const FINAL_STATUSES = ["succeeded", "failed"] as const;

export type AnswerClass = (typeof ANSWER_CLASSES)[number];
export type RetryCause = (typeof RETRY_CAUSES)[number];
export type FinalStatus = (typeof FINAL_STATUSES)[number];

/** The totals' field counting requests sent, each before it goes, whether or not its answer is heard. */
export const SENT_FIELD = "sent";

/** The totals' fields, a fixed vocabulary: the totals hash never holds more than these. */
export const TOTAL_FIELDS: readonly string[] = [
  SENT_FIELD,
  ...ANSWER_CLASSES.map((c) => `attempts:${c}`),
  ...RETRY_CAUSES.map((r) => `retries:${r}`),
  ...FINAL_STATUSES.map((s) => `final:${s}`),
];

/** A second's answers: accepted (2xx), refused for capacity (429), any other answer or none. */
export type SecondKind = "a" | "r" | "o";

const HOUR_MS = 3_600_000;

/** Counts to add to one hash: its name is built by the caller from `hour` (undefined: the totals). */
export interface CountGroup {
  /** Epoch ms of the start of the hour whose series hash this is; undefined for the totals hash. */
  readonly hour: number | undefined;
  readonly pairs: readonly (readonly [field: string, increment: number])[];
}

/** How one request is counted: its answer class, why it is worth another attempt, when it was answered. */
export interface CountedAttempt {
  readonly answerClass: AnswerClass;
  readonly retry: RetryCause | undefined;
  /** Answers before this one refusing the key (4xx, "other" on the chart): the request was sent again. */
  readonly keyRefusedBefore?: number | undefined;
  /** Epoch ms of the answer (or of giving up on it): the second of the series it falls in. */
  readonly answeredAt: number;
}

/**
 * The counts of some requests, to add in the write that records their answers: the totals first (always
 * present, perhaps empty: the script adds the final answers to it), then one series hash per hour.
 * Pure.
 */
export function attemptCounts(attempts: readonly CountedAttempt[]): CountGroup[] {
  const totals = new Map<string, number>();
  const hours = new Map<number, Map<string, number>>();
  const add = (into: Map<string, number>, field: string, n = 1) =>
    into.set(field, (into.get(field) ?? 0) + n);
  for (const a of attempts) {
    const refused = a.keyRefusedBefore ?? 0;
    add(totals, `attempts:${a.answerClass}`);
    if (refused > 0) add(totals, "attempts:4xx", refused);
    if (a.retry !== undefined) add(totals, `retries:${a.retry}`);
    // The refusals before the answer fall in its second: they are at most a request's time apart.
    const second = Math.floor(a.answeredAt / 1000);
    const hour = seriesHour(second * 1000);
    const kind: SecondKind = a.answerClass === "2xx" ? "a" : a.retry === "throttled" ? "r" : "o";
    const series = hours.get(hour) ?? new Map<string, number>();
    add(series, `${kind}${second - hour / 1000}`);
    if (refused > 0) add(series, `o${second - hour / 1000}`, refused);
    hours.set(hour, series);
  }
  return [
    { hour: undefined, pairs: [...totals] },
    ...[...hours].map(([hour, pairs]) => ({ hour, pairs: [...pairs] })),
  ];
}

/** The hour (epoch ms of its start) a time falls in: the series hash it is kept in. */
export function seriesHour(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

export const SERIES_HOUR_MS = HOUR_MS;

/** The fleet's totals as kept: every field of the vocabulary, 0 when none was counted. */
export interface FleetTotals {
  /** Requests sent, counted before each went: those in flight when a process died included. */
  readonly sent: number;
  /** Answers heard (network: none came), by class. */
  readonly attempts: Readonly<Record<AnswerClass, number>>;
  readonly retries: Readonly<Record<RetryCause, number>>;
  readonly final: Readonly<Record<FinalStatus, number>>;
}

/** Reads the fleet's totals (one HGETALL); a field outside the vocabulary, or not a count, is ignored. */
export async function readFleetTotals(redis: RedisClient, prefix: string): Promise<FleetTotals> {
  const raw = await redis.hgetall(new LedgerNames(prefix).fleetTotals);
  const of = <K extends string>(kind: string, keys: readonly K[]) =>
    Object.fromEntries(keys.map((k) => [k, countOf(raw[`${kind}:${k}`])])) as Record<K, number>;
  return {
    sent: countOf(raw[SENT_FIELD]),
    attempts: of("attempts", ANSWER_CLASSES),
    retries: of("retries", RETRY_CAUSES),
    final: of("final", FINAL_STATUSES),
  };
}

function countOf(text: string | undefined): number {
  const n = Number(text ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
