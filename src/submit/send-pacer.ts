import { randomUUID } from "node:crypto";
import type { AnswerReport, BudgetReply, SentAlready } from "../ledger/send-budget.js";
import { RequestHeldBackError } from "./errors/request-held-back-error.js";
import { FleetVerdicts } from "./fleet-verdict.js";
import { LatencyFloor } from "./latency-floor.js";
import { parseRateState } from "./rate-state.js";
import { RefusalFloor } from "./refusal-floor.js";
import {
  concurrencyFor,
  initialRateState,
  onAccepted,
  onCongested,
  onResume,
  phaseAt,
  rateAt,
  spacingMs,
  type RatePhase,
  type RateSettings,
  type RateState,
} from "./send-rate.js";

/** The fleet's budget as this process uses it (src/ledger/send-budget.ts). */
export interface BudgetPort {
  take(
    wanted: number,
    intervalMs: number,
    aheadMs: number,
    report?: AnswerReport,
    sent?: SentAlready,
  ): Promise<BudgetReply>;
  event(
    change: { readonly from: string; readonly state: string; readonly version: string } | undefined,
    holdMs: number,
    refused?: number,
    report?: AnswerReport,
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
  /** Runs `fn` after `ms` (setTimeout unless given: a model of the fleet runs the pacer on its own time). */
  readonly timer?: (fn: () => void, ms: number) => void;
  /** This process's name among the fleet's (a new one unless given). */
  readonly process?: string;
}

/** How far ahead a request may be booked: a cut reaches requests not yet booked within this. */
const BOOK_AHEAD_MS = 15;
/**
 * Send times booked in one round trip, at most (BOOK_AHEAD_MS bounds them too: at 300/s that is 5). At
 * 16, one process's bookings topped out near 4,000/s with its event loop busy, under an unlimited service.
 */
const MOST_BOOKED = 64;
/**
 * While the fleet's budget had room at the last booking (no request waiting for its time, nothing held),
 * for this long after it requests go at once, spaced here at the learned rate, and the next booking
 * charges them to the budget; a booking for every few requests cost a tenth of the throughput against a
 * service with no limit.
 */
const ROOM_FRESH_MS = 20;
/** With room, requests already sent are charged to the budget at most this often (one round trip each). */
const CHARGE_EVERY_MS = 5;
/** Latency well above its floor slows the increase at most this often. */
const CONGESTION_EVERY_MS = 500;
const RETRY_BUDGET_MS = 250;

/** A request waiting for its send time: sent at the rate given, or refused unsent. */
interface Waiter {
  readonly go: (rate: number) => void;
  readonly refuse: (error: Error) => void;
}

/** One request's place in the fleet's schedule: when it went out, and the fleet's rate it was booked at. */
export interface SendTicket {
  readonly sentAt: number;
  readonly rate: number;
}

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
  /** Until when (this process's clock) the budget's last reply left room: requests go at once. */
  #roomUntil = 0;
  /** Requests sent on room, not yet charged to the budget, and when the first of them went (its clock). */
  #owed = 0;
  #owedSince = 0;
  /** The earliest this process's next request may go (its clock): spacing at the rate, with room or not. */
  #nextSend = 0;
  #lastTake = 0;
  #resumeChecked = false;
  #lastCongestion = 0;
  #fleetRefused = 0;
  /** 429s not yet counted in the budget (a write was under way). */
  #uncounted = 0;
  #closed = false;
  readonly #waiting: Waiter[] = [];
  readonly #clock: () => number;
  readonly #timer: (fn: () => void, ms: number) => void;
  readonly #refusals: RefusalFloor;
  readonly #latency: LatencyFloor;
  readonly #verdicts: FleetVerdicts;
  /** Requests answered 429 by the service, and ms requests waited for their send time, in all. */
  throttled = 0;
  heldMs = 0;

  constructor(private readonly options: PacerOptions) {
    this.#clock = options.clock ?? Date.now;
    this.#timer = options.timer ?? ((fn, ms) => setTimeout(fn, ms));
    // the floor is learned from the first half of each recovery, while the rate is well under the plateau
    this.#refusals = new RefusalFloor(options.process ?? randomUUID(), {
      learnMs: options.settings.recoverMs / 2,
    });
    this.#latency = new LatencyFloor(this.#clock());
    this.#verdicts = new FleetVerdicts(options.settings, this.#refusals, options.retryAfterCapMs);
  }

  /**
   * Resolves at this request's booked send time with its ticket; the request's answer is given back with
   * it (onAccepted, onThrottled, or onUnanswered for anything else), exactly once.
   */
  acquire(): Promise<SendTicket> {
    if (this.#closed) return Promise.reject(stopping());
    const asked = this.#clock();
    return new Promise<SendTicket>((resolve, reject) => {
      this.#waiting.push({
        go: (rate) => {
          const sentAt = this.#clock();
          const waited = sentAt - asked;
          this.heldMs += waited;
          if (waited > 0) this.options.onHeld?.(waited);
          this.#refusals.sent(sentAt);
          resolve({ sentAt, rate });
        },
        refuse: reject,
      });
      this.#pump();
    });
  }

  /**
   * Books no more send times: the requests waiting for theirs, and any asked for later, are refused
   * unsent (RequestHeldBackError: back to the queue, no attempt spent). A worker stopping while Redis is
   * away would otherwise wait for ever for requests waiting on a budget that cannot answer.
   */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.refuse(stopping());
  }

  /**
   * A 429 (with its Retry-After). It is told to the fleet at once; when the fleet's refusals since the
   * first of late stand above those the service gives at any rate (src/submit/refusal-floor.ts), the
   * budget's reply makes a process cut the fleet's rate to what the service accepted of them and hold the
   * whole fleet for the Retry-After; otherwise only the refused request waits (its job's own retry) and
   * the 429 is only counted.
   */
  onThrottled(ticket: SendTicket, httpStatus: number, retryAfterMs: number | undefined): void {
    this.#refusals.answered(true, ticket.sentAt, ticket.rate, this.#offset);
    // near the capacity every request is booked with the fleet's, evenly spaced
    this.#roomUntil = 0;
    if (httpStatus === 429) {
      this.throttled++;
      this.#uncounted++;
    }
    this.#verdicts.heard(this.#clock(), retryAfterMs);
    this.#write(undefined, 0);
  }

  /** An accepted request, and how long it took. */
  onAccepted(ticket: SendTicket, latencyMs: number): void {
    this.#refusals.answered(false, ticket.sentAt, ticket.rate, this.#offset);
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

  /** Any other outcome (an outage's 503, no answer at all): nothing said of capacity, no longer in flight. */
  onUnanswered(ticket: SendTicket): void {
    this.#refusals.settled(ticket.sentAt);
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
    if (this.#closed) return;
    const now = this.#clock();
    if (now < this.#roomUntil && now + this.#offset >= this.#heldUntil) this.#sendOnRoom(now);
    if (this.#taking || (this.#waiting.length === 0 && this.#owed === 0)) return;
    // only charges to make: not more often than CHARGE_EVERY_MS
    const due = this.#lastTake + CHARGE_EVERY_MS - now;
    if (this.#waiting.length === 0 && due > 0) {
      this.#taking = true;
      this.#again(due);
      return;
    }
    this.#take(now);
  }

  /** Requests sent at once while the budget has room, spaced at the learned rate; charged later. */
  #sendOnRoom(now: number): void {
    const rate = this.#rate();
    const interval = spacingMs(rate);
    while (this.#waiting.length > 0) {
      const at = Math.max(this.#nextSend, now);
      if (at - now > BOOK_AHEAD_MS) return;
      const waiter = this.#waiting.shift();
      if (waiter === undefined) return;
      this.#nextSend = at + interval;
      this.#owe(1, at);
      this.#release(waiter, rate, at - now);
    }
  }

  /** Books send times for the requests waiting and charges those sent on room, in one round trip. */
  #take(now: number): void {
    this.#taking = true;
    this.#lastTake = now;
    const rate = this.#rate();
    const interval = spacingMs(rate);
    const sent = { count: this.#owed, spanMs: Math.max(0, now - this.#owedSince) };
    this.#owed = 0;
    const wanted = Math.min(this.#waiting.length, MOST_BOOKED);
    const report = this.#refusals.report(now, this.#offset, rate);
    this.options.budget
      .take(wanted, interval, BOOK_AHEAD_MS, report, sent)
      .then((reply) => {
        this.#absorb(reply);
        for (let i = 0; i < reply.booked; i++) {
          const waiter = this.#waiting.shift();
          if (waiter === undefined) break;
          this.#release(waiter, rate, reply.waitMs + i * interval);
        }
        const clock = this.#clock();
        this.#nextSend = Math.max(this.#nextSend, clock + reply.waitMs + reply.booked * interval);
        // room: the schedule, the requests sent on room charged, is not ahead of now, and nothing is held
        const room = reply.booked === wanted && reply.waitMs <= 0 && reply.heldUntil <= reply.now;
        this.#roomUntil = room ? clock + ROOM_FRESH_MS : 0;
        this.#checkStart(reply);
        if (reply.booked > 0 || wanted === 0) this.#again(0);
        else this.#again(Math.min(reply.waitMs, 1000));
      })
      .catch((error: unknown) => {
        this.#owe(sent.count, now - sent.spanMs);
        this.#roomUntil = 0;
        this.#refusals.unreport(report);
        this.options.onError(error);
        this.#again(RETRY_BUDGET_MS);
      });
  }

  /** `count` requests sent on room, the first of them at `at` (this process's clock): charged with the next booking. */
  #owe(count: number, at: number): void {
    if (count <= 0) return;
    this.#owedSince = this.#owed === 0 ? at : Math.min(this.#owedSince, at);
    this.#owed += count;
  }

  #release(waiter: Waiter, rate: number, delay: number): void {
    if (delay < 1) waiter.go(rate);
    else
      this.#timer(() => {
        if (this.#closed) waiter.refuse(stopping());
        else waiter.go(rate);
      }, delay);
  }

  #again(ms: number): void {
    const next = () => {
      this.#taking = false;
      this.#pump();
    };
    if (ms <= 0) next();
    else this.#timer(next, ms);
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
    const report = this.#refusals.report(this.#clock(), this.#offset, this.#rate());
    this.options.budget
      .event(change, holdMs, counted, report)
      .then((reply) => {
        this.#writing = false;
        this.#absorb(reply);
      })
      .catch((error: unknown) => {
        this.#writing = false;
        this.#uncounted += counted;
        this.#refusals.unreport(report);
        this.options.onError(error);
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
    const previous = this.#state;
    const state = parseRateState(reply.state) ?? initialRateState(this.options.settings, reply.now);
    this.#state = state;
    if (state.cutAt !== previous?.cutAt || state.returnedAt !== previous?.returnedAt)
      this.#verdicts.restarted(reply.refused);
    // a cut, by this process or another: judge the answers to requests sent after it only
    if (state.cutAt !== undefined && state.cutAt !== previous?.cutAt) {
      this.#roomUntil = 0;
      this.#refusals.restart(state.cutAt - this.#offset, state.max);
      return;
    }
    this.#refusals.absorb(reply);
    this.#judge(state, reply);
  }

  /** The fleet's answers, as the budget just gave them: a cut, a hold, a return to the plateau, or nothing. */
  #judge(state: RateState, reply: BudgetReply): void {
    const verdict = this.#verdicts.judge(state, reply, this.#sentPerSec, this.#heldUntil);
    if (verdict !== undefined) this.#write(verdict.next, verdict.holdMs);
  }
}

function stopping(): RequestHeldBackError {
  return new RequestHeldBackError("the worker is stopping");
}
