import { BETA, atLeast } from "../capacity/index.js";
import type { PassRecord } from "../ledger/passes.js";
import type { DeploymentView } from "./deployment-view.js";
import type { SendRateView } from "./send-rate-view.js";

/**
 * What limits tonight's speed, the one answer `status`, /metrics and the console's queue page give
 * (docs/operations.md, "Why is my night slow?"), each word from figures the relay already reads:
 * - `redis`: Redis does not answer, so nothing is taken or sent;
 * - `paused`: the queue is paused (a refused API key pauses it), so no worker takes a job;
 * - `cool-down`: an outage cool-down holds every worker, until a time;
 * - `retry-after`: the service asked every process to wait (its Retry-After), until a time;
 * - `service`: the service's capacity, only where its refusals bounded the rate as a capacity does (they
 *   rose with the rate: refusalsVerdict), or it refuses everything (a quota spent);
 * - `refusals`: the service's refusals cut the rate, but are not shown to be about it (at every rate, or
 *   too few cuts to tell yet);
 * - `concurrency`: SUBMIT_CONCURRENCY truly capped the requests in flight (the pacer said so, and the
 *   fleet sends below the rate);
 * - `rate-ceiling`: the learned rate sits at SUBMIT_RATE_PER_SEC;
 * - `workers`: invoices remain, none waits in the queue, and the fleet sends well below the rate;
 * - `learning`: nothing bounds it yet: the rate is still finding the service's speed;
 * - `idle`: nothing left to send.
 */
export const SPEED_LIMITS = [
  "redis",
  "paused",
  "cool-down",
  "retry-after",
  "service",
  "refusals",
  "concurrency",
  "rate-ceiling",
  "workers",
  "learning",
  "idle",
] as const;
export type SpeedLimitName = (typeof SPEED_LIMITS)[number];

/** The figures the answer is read from. */
export interface SpeedFigures {
  /** Redis's clock at the reading (epoch ms): the clock of every time below. */
  readonly now: number;
  /** The fleet's send rate; undefined before any process sent. */
  readonly sending: SendRateView | undefined;
  /** Invoices not final yet (queued or retrying in the ledger). */
  readonly remaining: number;
  /** BullMQ jobs waiting for a worker. */
  readonly waiting: number;
  /** BullMQ jobs a worker has taken (active): in flight, or held by a process that stopped. */
  readonly held: number;
  /** The running `run`'s --deadline (epoch ms), when one was given. */
  readonly deadline: number | undefined;
  /** The queue is paused: no worker takes a job. */
  readonly paused: boolean;
  /** Until when an outage cool-down holds every worker (epoch ms), else undefined. */
  readonly coolDownUntil: number | undefined;
}

export interface SpeedLimit {
  readonly limit: SpeedLimitName;
  /** Since when it limits (epoch ms), where the relay knows it. */
  readonly since: number | undefined;
  /** Until when it limits (a Retry-After), else undefined. */
  readonly until: number | undefined;
  /** What `status` prints after "speed limit": the limit's name first, then the figures and what to do. */
  readonly words: string;
  /** When the invoices left are all answered at the rate accepted lately; undefined when none are left. */
  readonly endsAt: number | undefined;
  readonly deadline: number | undefined;
  /** The night's end in words (against the deadline, where one is given); undefined when nothing is left. */
  readonly endWords: string | undefined;
}

/**
 * Below this share of the learned rate the rate is not what binds: in slow start the rate is twice what
 * was accepted (the fleet sends half of it when the rate binds); well below half, the workers do.
 */
const WORKERS_BOUND_SHARE = 0.4;

const perSec = (n: number): string => `${Math.round(n * 10) / 10}/s`;
const clockTime = (ms: number): string => `${new Date(ms).toISOString().slice(11, 19)} UTC`;
const percent = (share: number): string => `${Math.round(100 * share)} %`;

/** The answer from the figures. Pure. */
export function speedLimit(f: SpeedFigures): SpeedLimit {
  const found = limitOf(f);
  // Paused, nothing is sent: the rate accepted before the pause tells no end.
  const rate = found.limit === "paused" ? 0 : (f.sending?.fleetAcceptedPerSec ?? 0);
  const endsAt = f.remaining > 0 && rate > 0 ? f.now + (f.remaining / rate) * 1000 : undefined;
  return { until: undefined, ...found, endsAt, deadline: f.deadline, endWords: endWords(f, endsAt) };
}

/** The parts of a deployment's reading the answer is read from. */
export type SpeedView = Pick<DeploymentView, "census" | "sendRate" | "queue" | "passes" | "coolDownMs">;

/** The figures of a deployment's reading (undefined: Redis did not answer). */
export function speedFiguresOf(view: SpeedView | undefined): SpeedFigures | undefined {
  if (view === undefined) return undefined;
  const keys = view.census.byStatus;
  return {
    now: view.census.at,
    sending: view.sendRate,
    remaining: keys.queued + keys.retrying,
    waiting: view.queue.counts.waiting,
    held: view.queue.counts.active,
    deadline: runningDeadline(view.passes),
    paused: view.queue.isPaused,
    coolDownUntil: view.coolDownMs > 0 ? view.census.at + view.coolDownMs : undefined,
  };
}

/** The speed limit of a reading: what `status`, /metrics and the console each show. */
export function speedOf(view: SpeedView | undefined): SpeedLimit {
  const figures = speedFiguresOf(view);
  if (figures !== undefined) return speedLimit(figures);
  return {
    limit: "redis",
    since: undefined,
    until: undefined,
    words: "Redis: it does not answer, so no invoice is taken or sent; see that it runs and is reachable",
    endsAt: undefined,
    deadline: undefined,
    endWords: undefined,
  };
}

/** The deadline of the newest `run` still running, when it was given one. */
function runningDeadline(passes: readonly PassRecord[]): number | undefined {
  return passes.find((p) => p.kind === "run" && p.endedAt === undefined)?.deadline;
}

type Found = Pick<SpeedLimit, "limit" | "since" | "words"> & { readonly until?: number };

function limitOf(f: SpeedFigures): Found {
  const s = f.sending;
  if (f.paused && f.remaining > 0)
    return {
      limit: "paused",
      since: undefined,
      words: "the queue is paused: no worker takes an invoice; `status` says why under attention",
    };
  if (f.coolDownUntil !== undefined)
    return {
      limit: "cool-down",
      since: undefined,
      until: f.coolDownUntil,
      words: `the outage cool-down: no invoice is taken until ${clockTime(f.coolDownUntil)}, after failures in a row`,
    };
  if (s?.heldUntil !== undefined)
    return {
      limit: "retry-after",
      since: undefined,
      until: s.heldUntil,
      words: `the service's Retry-After: every process waits until ${clockTime(s.heldUntil)}, as the service asked`,
    };
  if (s?.refusingForCapacity === true)
    return {
      limit: "service",
      since: s.refusingSince,
      words:
        `the service's capacity: it has refused every request since ${clockTime(s.refusingSince ?? f.now)} ` +
        "(a quota spent); the invoices stay queued until it accepts again",
    };
  if (s !== undefined && s.phase !== "probing" && s.plateauPerSec !== undefined)
    return refusalsLimit(s, s.plateauPerSec, f.now);
  // truly capped: invoices wait and the fleet sends below the rate (a cut's share), not only a process
  // found its need higher (near a night's end nothing waits: the fleet sends what is left)
  if (s?.cappedByConcurrency === true && f.waiting > 0 && s.fleetSentPerSec < BETA * s.learnedPerSec)
    return {
      limit: "concurrency",
      since: undefined,
      words:
        `SUBMIT_CONCURRENCY: the requests in flight are capped below what ${perSec(s.learnedPerSec)} ` +
        "needs at the service's latency; raise it",
    };
  if (s !== undefined && s.ceilingPerSec > 0 && s.learnedPerSec >= s.ceilingPerSec)
    return {
      limit: "rate-ceiling",
      since: undefined,
      words: `SUBMIT_RATE_PER_SEC: the rate sits at its ceiling, ${perSec(s.ceilingPerSec)}; raise it if the service allows more`,
    };
  if (f.remaining > 0 && f.waiting === 0) {
    const sent = s?.fleetSentPerSec ?? 0;
    const allowed = s?.learnedPerSec ?? Number.POSITIVE_INFINITY;
    // Taken and none sent: a process gone without a word keeps its jobs until their locks lapse.
    if (sent === 0 && f.held > 0)
      return {
        limit: "workers",
        since: undefined,
        words:
          `the workers: ${f.held} invoice(s) taken by a worker and none sent lately; a process stopped ` +
          "without a word holds its jobs until their locks lapse (LOCK_DURATION_MS), or the service is slow to answer",
      };
    if (sent < allowed * WORKERS_BOUND_SHARE)
      return {
        limit: "workers",
        since: undefined,
        words:
          `the workers: few invoices in hand, none waits on the rate (${perSec(sent)} sent` +
          `${s === undefined ? "" : ` of ${perSec(s.learnedPerSec)} allowed`}); see that a worker runs`,
      };
  }
  // Invoices wait, none is taken and the fleet sent none lately, though it has sent before: no worker runs.
  if (s !== undefined && f.waiting > 0 && f.held === 0 && s.fleetSentPerSec === 0)
    return {
      limit: "workers",
      since: undefined,
      words:
        `the workers: ${f.waiting} invoice(s) wait and no worker has taken one lately; see that a worker ` +
        "runs (`run`, `start` or `worker`)",
    };
  if (f.remaining > 0 || (s?.fleetSentPerSec ?? 0) > 0)
    return {
      limit: "learning",
      since: undefined,
      words:
        s === undefined
          ? "none yet: nothing sent through the learned rate lately"
          : `none yet: the rate is finding the service's speed (${perSec(s.fleetSentPerSec)} sent lately)`,
    };
  return { limit: "idle", since: undefined, words: "nothing: no invoice is left to send" };
}

/**
 * Whether the service's refusals bounded the rate as a capacity does, judged on the pass's cuts
 * (src/capacity/rate.ts): refusals about the rate come as it rises past what the service accepts, so
 * they cut it once it is back at its plateau; a cut before that, at a rate the service had accepted,
 * comes of them only when the capacity falls. At the learned rate's own chance level (1 − β, as its
 * pastChance): fewer cuts under the plateau than a share 1 − β would give, past chance, show a
 * capacity; more show refusals at every rate; else it cannot be told yet. Pure.
 */
export function refusalsVerdict(cuts: number, under: number): "capacity" | "every-rate" | "untold" {
  const p = 1 - BETA;
  if (atLeast(cuts, under, p) < p) return "every-rate";
  return 1 - atLeast(cuts, under + 1, p) < p ? "capacity" : "untold";
}

/** The limit while refusals cut the rate lately: the service's capacity only when they rose with it. */
function refusalsLimit(s: SendRateView, plateau: number, now: number): Found {
  const cut = `cut last at ${clockTime(s.cutAt ?? now)}`;
  const under = `${s.cutsUnder} of ${s.cuts} cut(s) this pass came below the rate it had accepted`;
  const shares = s.answeredSinceCut === 0 ? [] : [percent(s.refusedSinceCut / s.answeredSinceCut)];
  const share = shares.map((p) => `${p} of answers since refused`);
  const [rate, verdict] = [perSec(s.learnedPerSec), refusalsVerdict(s.cuts, s.cutsUnder)];
  const found = (limit: SpeedLimitName, words: string): Found => ({ limit, since: s.cutAt, words });
  if (verdict === "capacity")
    return found(
      "service",
      `the service's capacity: about ${perSec(plateau)}, learned from its refusals, which rose with the ` +
        `rate (${under}); ${cut}; the rate is ${rate}`,
    );
  if (verdict === "every-rate")
    return found(
      "refusals",
      `refusals that came at rates the service had accepted (${[under, ...share].join("; ")}): it refuses ` +
        `at random, or its capacity fell; they hold the rate at ${rate}, ${cut}; more workers will not ` +
        "help; if it lasts, ask the service's owner why it refuses",
    );
  return found(
    "refusals",
    `the rate the service's refusals allowed: about ${perSec(plateau)}, ${cut}` +
      `${share.map((words) => ` (${words})`).join("")}; not shown to be its capacity yet (${under}); ` +
      `the rate is ${rate}`,
  );
}

/** The night's end in words when nothing was accepted lately: no end can be told. Pure. */
export function untoldEndWords(remaining: number): string {
  return `${remaining} invoice(s) left; none accepted lately, so no end can be told`;
}

function endWords(f: SpeedFigures, endsAt: number | undefined): string | undefined {
  if (f.remaining === 0) return undefined;
  const left = `${f.remaining} invoice(s) left`;
  if (endsAt === undefined) return untoldEndWords(f.remaining);
  const rate = perSec(f.sending?.fleetAcceptedPerSec ?? 0);
  const end = `${left}: at ${rate} accepted they end about ${clockTime(endsAt)}`;
  if (f.deadline === undefined) return end;
  const lateMin = Math.ceil((endsAt - f.deadline) / 60_000);
  return endsAt <= f.deadline
    ? `${end}, before the --deadline at ${clockTime(f.deadline)}`
    : `${end}, ${lateMin} min after the --deadline at ${clockTime(f.deadline)}: what is left then stays queued`;
}
