import { CapacityModel, type Capacity, type CapacityPatch } from "../../simulator/capacity.js";
import { mulberry32 } from "../../simulator/prng.js";
import {
  latencyFactor,
  retryAfterOf,
  type LatencyJump,
  type RetryAfterForm,
} from "../../simulator/service-answers.js";
import { SendPacer, tellPacer, type RateSettings } from "../../capacity/index.js";
import { memoryBudget, type BudgetTrace } from "./memory-budget.js";
import type { BudgetPort } from "../../ledger/send-budget.js";
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
  /** A share of admitted requests refused with a 429 at random besides (the chaos suite's: 0.05), with
   * `Retry-After: 1` unless `random429Bare`. */
  readonly random429?: number;
  readonly random429Bare?: boolean;
  /** How a refusal for capacity says its wait: whole seconds at least 1 (the simulator's, by default),
   * none, 0, the exact wait as a decimal, or an HTTP date on the service's clock, `clockSkewMs` off. */
  readonly retryAfter?: RetryAfterForm;
  readonly clockSkewMs?: number;
  /** One answer in twenty takes ten times as long (a long tail). */
  readonly latencyTail?: boolean;
  /** Answers take `factor` times as long from `atMs` to `untilMs` after the first request. */
  readonly latencyJump?: LatencyJump;
  /** Deployments sharing the service, each with its own budget (its own QUEUE_PREFIX); 1 if absent. */
  readonly deployments?: number;
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
  /** Requests each deployment had accepted. */
  readonly acceptedBy: readonly number[];
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
  const deployments = Math.max(1, options.deployments ?? 1);
  const budgets = Array.from({ length: deployments }, () => memoryBudget(time, REDIS_RTT_MS, states));
  const acceptedBy = budgets.map(() => 0);
  const settings = { ceiling: 0, startRate: 100, retryAfterCapMs: 60_000, ...options.settings };
  const tenths: { admitted: number; refused: number; rate: number }[] = [];
  // each deployment its own invoices (its own drop folder and queue), split evenly
  const waiting = Array.from({ length: deployments }, (_, d) =>
    Math.floor((options.invoices + deployments - 1 - d) / deployments),
  );
  let routed = 0;
  let randomRefused = 0;
  let retrying = 0;
  const backlog: number[] = [];
  let startedAt = 0;
  const pacers = Array.from(
    { length: options.processes * deployments },
    (_, i) =>
      new SendPacer({
        budget: budgetOf(budgets, i % deployments),
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
    const answer = (status: number, headers: Record<string, string> = {}): Answer => ({
      kind: "response",
      status,
      headers,
      body: "",
      timing: { startedAt: ticket.sentAt, durationMs: time.now - ticket.sentAt },
    });
    const again = (ms: number) => {
      retrying++;
      time.at(ms, () => {
        retrying--;
        waiting[i % deployments] = (waiting[i % deployments] ?? 0) + 1;
      });
    };
    if (!admitted.admitted || refusedAtRandom) {
      await time.sleep(0.5 + draw());
      inFlight[i] = (inFlight[i] ?? 0) - 1;
      if (admitted.admitted) {
        const bare = options.random429Bare === true;
        tellPacer(pacer, ticket, answer(429, bare ? {} : { "retry-after": "1" }), time.now);
        again(1000);
      } else {
        const form = options.retryAfter ?? "whole";
        const said = retryAfterOf(form, options.clockSkewMs ?? 0, admitted, time.now);
        tellPacer(pacer, ticket, answer(admitted.status, said.headers), time.now);
        again(said.waitMs);
      }
    } else {
      const shape = { tail: options.latencyTail === true, jump: options.latencyJump ?? null };
      const factor = latencyFactor(shape, time.now - startedAt, draw);
      const drawn = latency.min + (latency.max - latency.min) * draw();
      await time.sleep(drawn * factor + admitted.extraLatencyMs);
      capacity.release();
      inFlight[i] = (inFlight[i] ?? 0) - 1;
      // drawn only when asked for, so that a seed's night without errors is the one it always was
      const errors = options.errors ?? 0;
      const failed = errors > 0 && draw() < errors;
      tellPacer(pacer, ticket, answer(failed ? 503 : 201), time.now);
      if (failed) again(1000);
      else {
        routed++;
        acceptedBy[i % deployments] = (acceptedBy[i % deployments] ?? 0) + 1;
      }
    }
    await time.sleep(HANDLING_MS);
  };

  // each process keeps twice SUBMIT_CONCURRENCY's invoices in hand, as the worker does
  const inHand = pacers.map(() => 0);
  const pump = (i: number): void => {
    const pacer = pacers[i];
    if (pacer === undefined) return;
    const d = i % deployments;
    while ((waiting[d] ?? 0) > 0 && (inHand[i] ?? 0) < 2 * maxConcurrency) {
      waiting[d] = (waiting[d] ?? 0) - 1;
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
    acceptedBy,
    states,
  };
}

function budgetOf(budgets: readonly BudgetPort[], deployment: number): BudgetPort {
  const budget = budgets[deployment];
  if (budget === undefined) throw new RangeError(`no deployment ${deployment}`);
  return budget;
}
