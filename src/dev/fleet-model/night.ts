import { CapacityModel, type Capacity, type CapacityPatch } from "../../simulator/capacity.js";
import { mulberry32 } from "../../simulator/prng.js";
import { SendPacer, tellPacer, type RateSettings } from "../../capacity/index.js";
import { memoryBudget, type BudgetTrace } from "./memory-budget.js";
import { VirtualTime } from "./virtual-time.js";
import type { Answer } from "../../submit/answer.js";

/** A model night: a fleet of processes sends invoices to a service with a capacity, on virtual time. */
export interface NightOptions {
  readonly processes: number;
  readonly invoices: number;
  /** The service's capacity at the start: requests per second, and its burst (a tenth of a second if absent). */
  readonly capacity: number;
  readonly burst?: number;
  /** More of the service's limit: quota windows, 503 for overload, the most in flight. */
  readonly limit?: Partial<Capacity>;
  /** How long an accepted request takes, drawn evenly (20–40 ms if absent). */
  readonly latencyMs?: { readonly min: number; readonly max: number };
  /** SUBMIT_CONCURRENCY (512 if absent). */
  readonly maxConcurrency?: number;
  /** Changes of the capacity, at ms after the first request. */
  readonly changes?: readonly { readonly atMs: number; readonly patch: NonNullable<CapacityPatch> }[];
  /** A share of admitted requests refused with a 429 at random besides (the chaos suite's: 0.05). */
  readonly random429?: number;
  /** A share of admitted requests answered 503 without Retry-After besides, and sent again a second later
   * (the chaos suite's server errors: 0.2). */
  readonly errors?: number;
  readonly seed: number;
  /** SUBMIT_RATE_PER_SEC and the like; the relay's defaults otherwise. */
  readonly settings?: Partial<RateSettings>;
  /** Stop after this much model time at the latest (ms). */
  readonly limitMs?: number;
}

export interface NightOutcome {
  /** When the first request went out and when the last invoice was routed (model epoch ms). */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly routed: number;
  /** Requests the service refused for capacity, in all, and per second (the simulator's count). */
  readonly refused: number;
  readonly perSecond: readonly {
    readonly second: number;
    readonly admitted: number;
    readonly refused: number;
  }[];
  /** Admitted and refused per 100 ms from the first request, with the fleet's rate then. */
  readonly tenths: readonly { readonly admitted: number; readonly refused: number; readonly rate: number }[];
  /** Invoices not routed and not waiting out a retry's delay, at each whole second from the first request:
   * the work the fleet had in hand to send then. */
  readonly backlog: readonly number[];
  /** Requests refused at random (`random429`), apart from the capacity's. */
  readonly randomRefused: number;
  /** Every state of the learned rate written, when. */
  readonly states: readonly BudgetTrace[];
}

/** The model's epoch: any fixed time does. */
const T0 = 1_800_000_000_000;
/** A Redis round trip, and what a worker spends between an answer and its next invoice (ledger, BullMQ). */
const REDIS_RTT_MS = 0.4;
const HANDLING_MS = 3;
/** Requests in flight per process at most (SUBMIT_CONCURRENCY's default). */
const MAX_CONCURRENCY = 512;

/**
 * The relay's own pacers (src/capacity: the learned rate, booking ahead, the fleet's counts) for a
 * fleet of processes, against the simulator's own capacity model, with the
 * budget's arithmetic in memory one round trip away (memory-budget.ts): what `npm run bench:capacity`
 * runs with processes, sockets and Redis, in a second and the same every time for a seed. Requests reach
 * the service 0–3 ms after their send time; a refusal is answered at once, an accepted request after
 * `latencyMs` (20–40 ms) and the latency the capacity model adds as its bucket empties. What it leaves out (BullMQ, the
 * event loop, a busy machine) is what the benchmark measures.
 */
export async function modelNight(options: NightOptions): Promise<NightOutcome> {
  const time = new VirtualTime(T0);
  const draw = mulberry32(options.seed);
  const capacity = new CapacityModel(
    {
      ratePerSec: options.capacity,
      burst: options.burst ?? Math.max(1, Math.round(options.capacity / 10)),
      maxInFlight: Math.max(256, Math.round(options.capacity / 5)),
      latencyAtCapacityMs: 20,
      ...options.limit,
    },
    () => time.now,
  );
  const latency = options.latencyMs ?? { min: 20, max: 40 };
  const maxConcurrency = options.maxConcurrency ?? MAX_CONCURRENCY;
  const states: BudgetTrace[] = [];
  const budget = memoryBudget(time, REDIS_RTT_MS, states);
  const settings = { ceiling: 0, startRate: 100, retryAfterCapMs: 60_000, ...options.settings };
  const tenths: { admitted: number; refused: number; rate: number }[] = [];
  let waiting = options.invoices;
  let routed = 0;
  let randomRefused = 0;
  let retrying = 0;
  const backlog: number[] = [];
  let startedAt = 0;
  const pacers = Array.from(
    { length: options.processes },
    () =>
      new SendPacer({
        budget,
        settings,
        clock: () => time.now,
        timer: (fn: () => void, ms: number) => {
          time.at(ms, fn);
        },
        onError: (error: unknown) => {
          throw error;
        },
      }),
  );

  // requests in flight per process, held to the pacer's concurrency as the worker's request slots do
  const inFlight = pacers.map(() => 0);
  const send = async (pacer: SendPacer, i: number): Promise<void> => {
    const ticket = await pacer.acquire();
    while ((inFlight[i] ?? 0) >= pacer.concurrency(maxConcurrency)) await time.sleep(1);
    inFlight[i] = (inFlight[i] ?? 0) + 1;
    if (startedAt === 0) {
      startedAt = ticket.sentAt;
      const sample = () => {
        backlog.push(options.invoices - routed - retrying);
        time.at(1000, sample);
      };
      sample();
      for (const change of options.changes ?? [])
        time.at(change.atMs, () => {
          capacity.set(change.patch);
        });
    }
    await time.sleep(3 * draw());
    const admitted = capacity.admit();
    // a random refusal comes after admission, as the simulator draws its faults for admitted requests only
    const refusedAtRandom = admitted.admitted && draw() < (options.random429 ?? 0);
    if (refusedAtRandom) {
      capacity.release();
      randomRefused++;
    }
    const tenth = (tenths[Math.floor((time.now - startedAt) / 100)] ??= { admitted: 0, refused: 0, rate: 0 });
    if (admitted.admitted && !refusedAtRandom) tenth.admitted++;
    else if (!admitted.admitted) tenth.refused++;
    tenth.rate = ticket.rate;
    // answered as the service would, and heard by the pacer as the relay hears it (tellPacer)
    const answer = (status: number, retryAfterMs?: number): Answer => ({
      kind: "response",
      status,
      headers: retryAfterMs === undefined ? {} : { "retry-after": String(retryAfterMs / 1000) },
      body: "",
      timing: { startedAt: ticket.sentAt, durationMs: time.now - ticket.sentAt },
    });
    const again = (ms: number) => {
      retrying++;
      time.at(ms, () => {
        retrying--;
        waiting++;
      });
    };
    if (!admitted.admitted || refusedAtRandom) {
      await time.sleep(0.5 + draw());
      const retryAfterMs = admitted.admitted ? 1000 : admitted.retryAfterSeconds * 1000;
      inFlight[i] = (inFlight[i] ?? 0) - 1;
      tellPacer(pacer, ticket, answer(admitted.admitted ? 429 : admitted.status, retryAfterMs));
      again(retryAfterMs);
    } else {
      await time.sleep(latency.min + (latency.max - latency.min) * draw() + admitted.extraLatencyMs);
      capacity.release();
      inFlight[i] = (inFlight[i] ?? 0) - 1;
      // drawn only when asked for, so that a seed's night without errors is the one it always was
      const errors = options.errors ?? 0;
      const failed = errors > 0 && draw() < errors;
      tellPacer(pacer, ticket, answer(failed ? 503 : 201));
      if (failed) again(1000);
      else routed++;
    }
    await time.sleep(HANDLING_MS);
  };

  // each process keeps twice SUBMIT_CONCURRENCY's invoices in hand, as the worker does
  const inHand = pacers.map(() => 0);
  const pump = (i: number): void => {
    const pacer = pacers[i];
    if (pacer === undefined) return;
    while (waiting > 0 && (inHand[i] ?? 0) < 2 * maxConcurrency) {
      waiting--;
      inHand[i] = (inHand[i] ?? 0) + 1;
      void send(pacer, i).then(() => {
        inHand[i] = (inHand[i] ?? 0) - 1;
      });
    }
    time.at(1, () => {
      pump(i);
    });
  };
  pacers.forEach((_, i) => {
    pump(i);
  });
  await time.run(() => routed >= options.invoices, options.limitMs ?? 600_000);
  const stats = capacity.stats();
  return {
    startedAt,
    endedAt: time.now,
    routed,
    refused: stats.refused,
    randomRefused,
    perSecond: stats.perSecond,
    tenths: Array.from(tenths, (t) => t ?? { admitted: 0, refused: 0, rate: 0 }),
    backlog,
    states,
  };
}
