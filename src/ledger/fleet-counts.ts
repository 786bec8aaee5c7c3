import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * What the fleet's processes count of their requests, kept in Redis so that it outlives them
 * (docs/operations.md, "Metrics"): totals since the deployment began (requests by answer class, retries
 * by reason, final answers by status) and the answers per second (accepted, refused for capacity, other),
 * from which a pass's chart is drawn. A process counts in memory and hands what it counted to the next
 * write of answers (answers.lua), at most once per FLUSH_MS: no round trip of its own while answers flow.
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

/** The totals' fields, a fixed vocabulary: the totals hash never holds more than these. */
export const TOTAL_FIELDS: readonly string[] = [
  ...ANSWER_CLASSES.map((c) => `attempts:${c}`),
  ...RETRY_CAUSES.map((r) => `retries:${r}`),
  ...FINAL_STATUSES.map((s) => `final:${s}`),
];

/** A second's answers: accepted (2xx), refused for capacity (429), any other answer or none. */
export type SecondKind = "a" | "r" | "o";

/**
 * How long counts wait in a process before they are written: the series' resolution, so a chart or a
 * scrape is at most a second behind, and at most one write of counts per second per process however
 * many answers come.
 */
export const FLUSH_MS = 1000;
const HOUR_MS = 3_600_000;

/** Counts to add to one hash: its name is built by the caller from `hour` (undefined: the totals). */
export interface CountGroup {
  /** Epoch ms of the start of the hour whose series hash this is; undefined for the totals hash. */
  readonly hour: number | undefined;
  readonly pairs: readonly (readonly [field: string, increment: number])[];
}

/** Counts gathered by one process since its last write. */
export class FleetCounts {
  #totals = new Map<string, number>();
  /** Epoch second → [accepted, refused, other]. */
  #seconds = new Map<number, [number, number, number]>();
  #takenAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** One request's answer: its class and, when it is worth another attempt, why. */
  attempt(answerClass: AnswerClass, retry: RetryCause | undefined): void {
    this.#add(`attempts:${answerClass}`, 1);
    if (retry !== undefined) this.#add(`retries:${retry}`, 1);
    const second = Math.floor(this.now() / 1000);
    const bucket = this.#seconds.get(second) ?? [0, 0, 0];
    bucket[answerClass === "2xx" ? 0 : retry === "throttled" ? 1 : 2]++;
    this.#seconds.set(second, bucket);
  }

  /** An invoice's final answer, written by this process. */
  final(status: FinalStatus): void {
    this.#add(`final:${status}`, 1);
  }

  /** Whether anything waits to be written. */
  get pending(): boolean {
    return this.#totals.size > 0;
  }

  /**
   * What waits to be written, taken, when FLUSH_MS has passed since the last take (or `force`);
   * undefined when nothing is due. Give it back with `putBack` if the write fails.
   */
  take(force = false): CountGroup[] | undefined {
    const now = this.now();
    if (!this.pending || (!force && now - this.#takenAt < FLUSH_MS)) return undefined;
    this.#takenAt = now;
    const groups: CountGroup[] = [{ hour: undefined, pairs: [...this.#totals] }];
    const hours = new Map<number, [string, number][]>();
    for (const [second, counts] of this.#seconds) {
      const hour = Math.floor((second * 1000) / HOUR_MS) * HOUR_MS;
      const pairs = hours.get(hour) ?? [];
      const at = second - hour / 1000;
      (["a", "r", "o"] as const).forEach((kind, i) => {
        if (counts[i] !== 0) pairs.push([`${kind}${at}`, counts[i] ?? 0]);
      });
      hours.set(hour, pairs);
    }
    for (const [hour, pairs] of hours) groups.push({ hour, pairs });
    this.#totals = new Map();
    this.#seconds = new Map();
    return groups;
  }

  /** Counts taken for a write that failed: they go with the next one. */
  putBack(groups: readonly CountGroup[]): void {
    for (const group of groups)
      for (const [field, n] of group.pairs) {
        if (group.hour === undefined) this.#add(field, n);
        else {
          const kind = field.charAt(0);
          const second = group.hour / 1000 + Number(field.slice(1));
          const bucket = this.#seconds.get(second) ?? [0, 0, 0];
          bucket[kind === "a" ? 0 : kind === "r" ? 1 : 2] += n;
          this.#seconds.set(second, bucket);
        }
      }
    this.#takenAt = 0;
  }

  #add(field: string, n: number): void {
    this.#totals.set(field, (this.#totals.get(field) ?? 0) + n);
  }
}

/** The hour (epoch ms of its start) a time falls in: the series hash it is kept in. */
export function seriesHour(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

export const SERIES_HOUR_MS = HOUR_MS;

/** The fleet's totals as kept: every field of the vocabulary, 0 when none was counted. */
export interface FleetTotals {
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
    attempts: of("attempts", ANSWER_CLASSES),
    retries: of("retries", RETRY_CAUSES),
    final: of("final", FINAL_STATUSES),
  };
}

function countOf(text: string | undefined): number {
  const n = Number(text ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
