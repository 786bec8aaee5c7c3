import { seriesHour, SERIES_HOUR_MS } from "./fleet-counts.js";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

/**
 * The fleet's answers per second, as every submitting process adds them with its answers
 * (src/ledger/fleet-counts.ts), and the learned rate and the fleet's sending rate as a process running
 * passes samples them (src/use-cases/rate-sampler.ts): one hash per UTC hour, fields `a`, `r`, `o`, `l`,
 * `s` followed by the second of the hour. A pass's chart is this
 * series between its start and its end; a second with no answer has no field.
 */
export interface SecondPoint {
  /** Epoch seconds. */
  readonly second: number;
  /** Answered 2xx. */
  readonly accepted: number;
  /** Refused for capacity (429). */
  readonly refused: number;
  /** Any other answer, or none (a timeout, a lost connection). */
  readonly other: number;
  /** The learned rate sampled in that second, requests per second; absent when none was sampled. */
  readonly learned: number | undefined;
  /** What every process together sent per second lately, sampled in that second. */
  readonly sent: number | undefined;
}

const FIELD = /^([aorls])(\d{1,4})$/;

/** The points of the seconds in [fromMs, toMs] that have any, in time order. */
export async function readSendSeries(
  redis: RedisClient,
  prefix: string,
  fromMs: number,
  toMs: number,
): Promise<SecondPoint[]> {
  const names = new LedgerNames(prefix);
  const hours: number[] = [];
  for (let hour = seriesHour(fromMs); hour <= toMs; hour += SERIES_HOUR_MS) hours.push(hour);
  const hashes = await Promise.all(hours.map((hour) => redis.hgetall(names.sendSeries(hour))));
  const points = new Map<
    number,
    { a: number; r: number; o: number; l: number | undefined; s: number | undefined }
  >();
  const [from, to] = [Math.floor(fromMs / 1000), Math.floor(toMs / 1000)];
  hashes.forEach((hash, i) => {
    const base = (hours[i] ?? 0) / 1000;
    for (const [field, text] of Object.entries(hash)) {
      const match = FIELD.exec(field);
      const value = Number(text);
      if (match === null || !Number.isFinite(value) || value < 0) continue;
      const second = base + Number(match[2]);
      if (second < from || second > to) continue;
      const point = points.get(second) ?? { a: 0, r: 0, o: 0, l: undefined, s: undefined };
      const kind = match[1] as "a" | "r" | "o" | "l" | "s";
      point[kind] = value;
      points.set(second, point);
    }
  });
  return [...points]
    .sort(([x], [y]) => x - y)
    .map(([second, p]) => ({
      second,
      accepted: p.a,
      refused: p.r,
      other: p.o,
      learned: p.l,
      sent: p.s,
    }));
}

/** A sample of the learned rate's read model (src/queue/send-rate-view.ts), requests per second. */
export interface RateSample {
  readonly learned: number;
  readonly sent: number;
}

/**
 * Notes the learned rate and the fleet's sending rate at `atMs` in the series (one round trip), kept as
 * long as the counts of that hour. Two processes sampling the same second write the same fleet-wide
 * figures.
 */
export async function recordRateSample(
  redis: RedisClient,
  prefix: string,
  atMs: number,
  sample: RateSample,
  retentionMs: number,
): Promise<void> {
  const hour = seriesHour(atMs);
  const name = new LedgerNames(prefix).sendSeries(hour);
  const at = Math.floor((atMs - hour) / 1000);
  const tenths = (n: number) => String(Math.round(n * 10) / 10);
  await redis
    .multi()
    .hset(name, `l${at}`, tenths(sample.learned), `s${at}`, tenths(sample.sent))
    .pexpireat(name, hour + SERIES_HOUR_MS + retentionMs)
    .exec();
}
