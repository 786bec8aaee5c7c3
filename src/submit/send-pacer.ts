import { z } from "zod";
import type { BudgetReply } from "../ledger/send-budget.js";
import { LatencyFloor } from "./latency-floor.js";
import { RefusalFloor } from "./refusal-floor.js";
import {
  concurrencyFor,
  initialRateState,
  onAccepted,
  onCongested,
  onResume,
  onThrottled,
  phaseAt,
  rateAt,
  spacingMs,
  type RatePhase,
  type RateSettings,
  type RateState,
} from "./send-rate.js";

/** The fleet's budget as this process uses it (src/ledger/send-budget.ts). */
export interface BudgetPort {
  take(wanted: number, intervalMs: number, aheadMs: number): Promise<BudgetReply>;
  event(
    change: { readonly from: string; readonly state: string; readonly version: string } | undefined,
    holdMs: number,
    refused?: number,
  ): Promise<BudgetReply>;
}

export interface PacerOptions {
  readonly budget: BudgetPort;
  readonly settings: RateSettings;
  /** The longest Retry-After honoured (RETRY_AFTER_CAP_MS). */
  readonly retryAfterCapMs: number;
  /** A request waited this long for its send time (metrics). */
  readonly onHeld?: (ms: number) => void;
  /** Redis unreachable or a write refused: reported, then tried again. */
  readonly onError: (error: unknown) => void;
  /** This process's clock (epoch ms); the budget's replies say how far Redis's is from it. */
  readonly clock?: () => number;
}

/** How far ahead a request may be booked: a cut reaches requests not yet booked within this. */
const BOOK_AHEAD_MS = 200;
/** Send times booked in one round trip, at most. */
const MOST_BOOKED = 16;
/** Latency well above its floor slows the increase at most this often. */
const CONGESTION_EVERY_MS = 500;
const RETRY_BUDGET_MS = 250;
/** Answers needed before their accepted share is believed. */
const SHARE_SAMPLE = 6;

const rateStateSchema = z.object({
  version: z.number(),
  rate: z.number(),
  at: z.number(),
  max: z.number(),
  refusingSince: z.number(),
});

export interface PacerSnapshot {
  readonly rate: number;
  readonly phase: RatePhase;
  /** Requests per second the whole fleet sent lately. */
  readonly fleetSentPerSec: number;
  /** Since when the service refuses for capacity and accepts nothing (epoch ms), or 0. */
  readonly refusingSince: number;
  /** Requests the service refused for capacity, every process together, in all (as last read). */
  readonly fleetRefused: number;
}

/**
 * This process's side of the fleet's send budget: every request waits for a send time booked in Redis
 * (spaced evenly at the learned rate, for every process together), and every answer may move the learned
 * rate (src/submit/send-rate.ts). Times are the Redis server's, estimated between calls.
 */
export class SendPacer {
  #state: RateState | undefined;
  #version = "0";
  #heldUntil = 0;
  #sentPerSec = 0;
  #offset = 0;
  #taking = false;
  #writing = false;
  #resumeChecked = false;
  #lastCongestion = 0;
  #fleetRefused = 0;
  /** 429s not yet counted in the budget (a write was under way). */
  #uncounted = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #clock: () => number;
  readonly #refusals: RefusalFloor;
  readonly #latency: LatencyFloor;
  /** Requests answered 429 by the service, and ms requests waited for their send time, in all. */
  throttled = 0;
  heldMs = 0;

  constructor(private readonly options: PacerOptions) {
    this.#clock = options.clock ?? Date.now;
    this.#refusals = new RefusalFloor();
    this.#latency = new LatencyFloor(this.#clock());
  }

  /** Resolves at this request's booked send time. */
  acquire(): Promise<void> {
    const asked = this.#clock();
    return new Promise<void>((resolve) => {
      this.#waiting.push(() => {
        const waited = this.#clock() - asked;
        this.heldMs += waited;
        if (waited > 0) this.options.onHeld?.(waited);
        resolve();
      });
      this.#pump();
    });
  }

  /**
   * A 429 (with its Retry-After). When the refusals of late stand above those the service gives at any rate
   * (src/submit/refusal-floor.ts), the fleet's rate is cut and the whole fleet held for the Retry-After;
   * otherwise only the refused request waits (its job's own retry) and the 429 is only counted.
   */
  onThrottled(httpStatus: number, retryAfterMs: number | undefined, sentAt?: number): void {
    const now = this.#clock();
    this.#refusals.observe(true, now, sentAt);
    if (httpStatus === 429) {
      this.throttled++;
      this.#uncounted++;
    }
    const state = this.#state;
    if (state === undefined) return;
    if (!this.#refusals.overCapacity()) {
      this.#write(undefined, 0);
      return;
    }
    const at = this.#now();
    const next = onThrottled(state, at, this.options.settings, this.#sentPerSec, this.#acceptedShare());
    const hold = httpStatus === 429 ? Math.min(retryAfterMs ?? 0, this.options.retryAfterCapMs) : 0;
    if (next === undefined && this.#uncounted === 0 && (hold === 0 || at + hold <= this.#heldUntil)) return;
    this.#write(next, hold);
  }

  /** An accepted request and how long it took. */
  onAccepted(latencyMs: number, sentAt?: number): void {
    this.#refusals.observe(false, this.#clock(), sentAt);
    const congested = this.#latency.observe(latencyMs, this.#clock());
    const state = this.#state;
    if (state === undefined) return;
    const now = this.#now();
    const accepted = onAccepted(state);
    if (accepted !== undefined) {
      this.#write(accepted, 0);
      return;
    }
    if (!congested || now - this.#lastCongestion < CONGESTION_EVERY_MS) return;
    this.#lastCongestion = now;
    const slowed = onCongested(state, now, this.options.settings, this.#sentPerSec);
    if (slowed !== undefined) this.#write(slowed, 0);
  }

  /** Requests this process needs in flight for the learned rate at the latency seen, within [1, max]. */
  concurrency(max: number): number {
    const latency = this.#latency.average;
    if (this.#state === undefined || latency === 0) return max;
    return concurrencyFor(this.#rate(), latency, max);
  }

  snapshot(): PacerSnapshot | undefined {
    const state = this.#state;
    if (state === undefined) return undefined;
    const now = this.#now();
    return {
      rate: this.#rate(),
      phase: phaseAt(state, now, this.#heldUntil, this.options.settings),
      fleetSentPerSec: this.#sentPerSec,
      refusingSince: state.refusingSince,
      fleetRefused: this.#fleetRefused,
    };
  }

  #rate(): number {
    const state = this.#state ?? initialRateState(this.options.settings, this.#now());
    return rateAt(state, this.#now(), this.options.settings, this.#sentPerSec);
  }

  #now(): number {
    return this.#clock() + this.#offset;
  }

  #pump(): void {
    if (this.#taking || this.#waiting.length === 0) return;
    this.#taking = true;
    const interval = spacingMs(this.#rate());
    this.options.budget
      .take(Math.min(this.#waiting.length, MOST_BOOKED), interval, BOOK_AHEAD_MS)
      .then((reply) => {
        this.#absorb(reply);
        for (let i = 0; i < reply.booked; i++) {
          const go = this.#waiting.shift();
          if (go === undefined) break;
          const delay = reply.waitMs + i * interval;
          if (delay < 1) go();
          else setTimeout(go, delay);
        }
        this.#checkStart(reply);
        if (reply.booked > 0) this.#again(0);
        else this.#again(Math.min(reply.waitMs, 1000));
      })
      .catch((error: unknown) => {
        this.options.onError(error);
        this.#again(RETRY_BUDGET_MS);
      });
  }

  #again(ms: number): void {
    const next = () => {
      this.#taking = false;
      this.#pump();
    };
    if (ms <= 0) next();
    else setTimeout(next, ms);
  }

  /** The first answer of the budget: a state to start from, or a resume after a pause. */
  #checkStart(reply: BudgetReply): void {
    if (this.#resumeChecked) return;
    this.#resumeChecked = true;
    const state = this.#state;
    if (reply.state === "" || state === undefined) {
      this.#write(initialRateState(this.options.settings, reply.now), 0, "0");
      return;
    }
    const resumed = onResume(state, reply.lastSentAt, reply.now, this.options.settings);
    if (resumed !== undefined) this.#write(resumed, 0);
  }

  #write(next: RateState | undefined, holdMs: number, from = this.#version): void {
    if (this.#writing) return;
    this.#writing = true;
    const counted = this.#uncounted;
    this.#uncounted = 0;
    const change =
      next === undefined
        ? undefined
        : { from, state: JSON.stringify({ ...next, version: next.version }), version: String(next.version) };
    this.options.budget
      .event(change, holdMs, counted)
      .then((reply) => {
        this.#absorb(reply);
      })
      .catch((error: unknown) => {
        this.#uncounted += counted;
        this.options.onError(error);
      })
      .finally(() => {
        this.#writing = false;
      });
  }

  #absorb(reply: BudgetReply): void {
    this.#offset = reply.now - this.#clock();
    this.#heldUntil = reply.heldUntil;
    this.#sentPerSec = reply.sentPerSec;
    this.#version = reply.version;
    this.#fleetRefused = reply.refused;
    if (reply.state === "") {
      this.#state ??= initialRateState(this.options.settings, reply.now);
      return;
    }
    const parsed = rateStateSchema.safeParse(parseJson(reply.state));
    const previous = this.#state;
    this.#state = parsed.success ? parsed.data : initialRateState(this.options.settings, reply.now);
    // a cut, by this process or another: judge the answers to requests sent after it only
    if (this.#state.refusingSince !== 0 && this.#state.at !== previous?.at)
      this.#refusals.restart(this.#state.at - this.#offset);
  }

  /** The share of recent requests the service accepted, of those it would accept at any rate. */
  #acceptedShare(): number {
    const { share, answers } = this.#refusals.recent();
    if (answers < SHARE_SAMPLE) return 1;
    return Math.min(1, (1 - share) / (1 - Math.min(0.9, this.#refusals.floor)));
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
