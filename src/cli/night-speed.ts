import type { FleetTotals } from "../ledger/fleet-counts.js";
import {
  speedFiguresOf,
  speedOf,
  untoldEndWords,
  type SpeedLimit,
  type SpeedLimitName,
  type SpeedView,
} from "../queue/speed-limit.js";

/** A reading of the deployment the speed limit is read from (undefined: Redis did not answer). */
export type NightReading = (SpeedView & { readonly fleetTotals: FleetTotals }) | undefined;

/** A reading of the night: when, the speed limit read from it, the fleet's refusals counted by then. */
export interface SpeedSample {
  readonly at: number;
  readonly speed: SpeedLimit;
  /** The fleet's refused requests in all (429, or 503 with Retry-After); undefined: not read. */
  readonly refused: number | undefined;
  /** The fleet's accepted (2xx) answers in all; undefined: not read. */
  readonly accepted: number | undefined;
  /** The night's end in words when no end can be told (speed-limit.ts); undefined: nothing is left. */
  readonly untold: string | undefined;
}

/**
 * How often `run` reads the speed limit during its pass: as often as the rate sampler notes the learned
 * rate (src/use-cases/rate-sampler.ts), the resolution of the pass's chart, so a limit that held for a
 * second of the night is seen.
 */
export const SPEED_READ_MS = 1000;

const clockTime = (ms: number): string => `${new Date(ms).toISOString().slice(11, 19)} UTC`;

/** The sample of a reading (src/queue/speed-limit.ts speedOf: the words `status` prints). Pure. */
export function speedSample(at: number, reading: NightReading): SpeedSample {
  const remaining = speedFiguresOf(reading)?.remaining ?? 0;
  return {
    at,
    speed: speedOf(reading),
    refused: reading?.fleetTotals.retries.throttled,
    accepted: reading?.fleetTotals.attempts["2xx"],
    untold: remaining > 0 ? untoldEndWords(remaining) : undefined,
  };
}

/**
 * What `run` says at its end about the night's speed, from readings taken through it, the first before
 * anything was sent and the last at its end: the speed limit that held for most of the readings while
 * invoices were left, in the words `status` prints for it (as read mid-way through its readings), with
 * its share of the night and since when; where invoices are left, when they would end at the rate last
 * accepted (against --deadline); and how many requests the service refused, every process together, while
 * the run ran, and their share of those it accepted or refused. Never a claim the readings do not make: whether refusals bounded the rate is the speed
 * limit's to say. Pure.
 */
export function nightSpeedLines(samples: readonly SpeedSample[]): string[] {
  const lines: string[] = [];
  // the readings while invoices were left; with none (a night too short to read), the last one
  const busy = samples.filter((s) => s.speed.limit !== "idle");
  const read = busy.length > 0 ? busy : samples.slice(-1);
  const tally = new Map<SpeedLimitName, SpeedSample[]>();
  for (const s of read) tally.set(s.speed.limit, [...(tally.get(s.speed.limit) ?? []), s]);
  const ranked = [...tally].sort((a, b) => b[1].length - a[1].length);
  const [top] = ranked;
  if (top !== undefined && top[0] !== "idle") {
    // its words as read mid-way through its readings: the figures of the night, not of its tail
    const [, held] = top;
    const mid = held[Math.floor(held.length / 2)] as SpeedSample;
    // since the stretch of readings began, or earlier where the reading knows (refusing since): a cut's
    // time is the last cut's, not when the night began to follow the limit
    const since = Math.min(mid.speed.since ?? Infinity, stretchStart(read, mid));
    const share = (n: number) => `${Math.round((100 * n) / read.length)} %`;
    const others = ranked.slice(1).map(([name, list]) => `${name} ${share(list.length)}`);
    lines.push(
      `speed limit: ${mid.speed.words} [${share(held.length)} of the night's readings, this one since ` +
        `${clockTime(since)}, its figures as read at ${clockTime(mid.at)}` +
        `${others.length === 0 ? "" : `; also ${others.join(", ")}`}]`,
    );
  }
  // invoices left at the end: when they end, from the last reading that saw any accepted (the worker
  // closed at a --deadline accepts nothing more: that is no rate to tell an end by), and only when the
  // service accepted some (2xx) while the run ran: answers that refused the key tell no end
  const last = samples[samples.length - 1];
  const acceptedAtFirst = samples.find((s) => s.accepted !== undefined)?.accepted ?? 0;
  // Paused at the end (the key refused), nothing more is sent: no earlier rate tells an end.
  const told =
    last?.speed.limit === "paused"
      ? undefined
      : [...samples]
          .reverse()
          .find((s) => s.speed.endsAt !== undefined && (s.accepted ?? 0) > acceptedAtFirst)?.speed.endWords;
  if (last?.speed.endWords !== undefined)
    lines.push(`night ends: ${told ?? last.untold ?? last.speed.endWords}`);
  const [refused, accepted] = [during(samples, (s) => s.refused), during(samples, (s) => s.accepted)];
  const share =
    accepted > 0
      ? `, ${Math.round((100 * refused) / (refused + accepted))} % of those it accepted or refused,`
      : "";
  if (refused > 0)
    lines.push(
      `${refused} request(s) refused by the service (429, or 503 with Retry-After)${share} while this run ran, every ` +
        "process together: each sent again after a wait (the one it asked for, where it gave one), none " +
        "counted as a failed attempt",
    );
  return lines;
}

/** When the unbroken stretch of readings with `sample`'s limit, up to `sample`, began. */
function stretchStart(read: readonly SpeedSample[], sample: SpeedSample): number {
  let i = read.indexOf(sample);
  while (i > 0 && read[i - 1]?.speed.limit === sample.speed.limit) i--;
  return read[i]?.at ?? sample.at;
}

/** A count of the fleet's (refusals, accepted answers) between the first reading and the last that read it. */
function during(samples: readonly SpeedSample[], count: (s: SpeedSample) => number | undefined): number {
  const counted = samples.flatMap((s) => {
    const n = count(s);
    return n === undefined ? [] : [n];
  });
  const [first, last] = [counted[0], counted[counted.length - 1]];
  return first === undefined || last === undefined ? 0 : Math.max(0, last - first);
}

/**
 * Reads the night's speed limit every SPEED_READ_MS while `run`'s pass goes on: `end` takes a last
 * reading and gives what to say (nightSpeedLines), `stop` ends the readings without a word. `read` never
 * rejects (undefined: Redis did not answer).
 */
export async function watchNightSpeed(
  read: () => Promise<NightReading>,
  clock: () => number = Date.now,
): Promise<{ end(): Promise<string[]>; stop(): void }> {
  const samples: SpeedSample[] = [];
  const take = async () => {
    const at = clock();
    samples.push(speedSample(at, await read()));
  };
  await take();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void take().finally(() => {
      busy = false;
    });
  }, SPEED_READ_MS);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
    },
    end: async () => {
      clearInterval(timer);
      await take();
      return nightSpeedLines(samples.sort((a, b) => a.at - b.at));
    },
  };
}
