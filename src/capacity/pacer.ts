import { LATELY_MS, type BudgetCall, type BudgetPort, type BudgetReply } from "../ledger/send-budget.js";
import { RequestHeldBackError } from "../submit/errors/request-held-back-error.js";
import * as policy from "./rate.js";
import type { RateSettings, RateState } from "./rate.js";

/** `onHeld`: a request waited this long for its send time (metrics); `onError`: Redis did not answer (told,
 * then asked again); `clock` and `timer`: Date.now and setTimeout unless given (the fleet model's time). */
export interface PacerOptions {
  readonly budget: BudgetPort;
  readonly settings: RateSettings;
  readonly onHeld?: (ms: number) => void;
  readonly onError: (error: unknown) => void;
  /** The rate was cut, or the fleet held, by this process's write: told once per event, fleet-wide. */
  readonly onEvent?: (event: RateEvent) => void;
  readonly clock?: () => number;
  readonly timer?: (fn: () => void, ms: number) => void;
}

/** How far ahead a send time may be booked: a cut reaches every request not booked within this. */
const BOOK_AHEAD_MS = 15;
/** Send times booked in one round trip at most: one process's bookings reach ~4,000/s with 16, far more with 64. */
const MOST_BOOKED = 64;
/** While the budget had room at the last booking (nothing waited, nothing held), for this long requests go
 * at once, spaced at the rate, and are charged with the next call: a booking per request cost a tenth of
 * the throughput against a service with no limit. Counts and charges go at most this often too. */
const ROOM_MS = 20;
/** Requests in flight before the first answer: TCP's initial window (RFC 6928, ten segments); from there the
 * rate grows with what the service accepted. */
const FIRST_FLIGHT = 10;

/** A cut (the new rate and the plateau the service showed) or a hold (until when, server's clock). */
export type RateEvent =
  | Readonly<{ kind: "cut"; rate: number; plateau: number }>
  | Readonly<{ kind: "hold"; until: number; rate: number }>;

/** A request's send time (this process's clock), the rate it went at, and how long it waited for it. */
export type SendTicket = Readonly<Record<"sentAt" | "rate" | "heldMs", number>>;

type Waiter = Readonly<{ go: (rate: number) => void; stop: (error: Error) => void }>;

/** What a call tells the budget of this process's sends and answers since the last (Told). */
const NOTHING_TOLD = { owed: 0, accepted: 0, refused: 0 };
type Told = typeof NOTHING_TOLD;

/** The budget as known before its first reply. */
const UNREAD: BudgetReply = {
  ...{ booked: 0, waitMs: 0, now: 0, hold: 0, v: "0", state: "", seen: 0, capped: 0, refusedAt: 0 },
  ...{ sentPerSec: 0, acceptedPerSec: 0, refusedPerSec: 0, accepted: 0, refused: 0 },
};

/** This process's side of the fleet's send budget: every request waits for a send time booked in Redis
 * (spaced evenly at the learned rate for every process together), and every answer is counted there; the
 * rate's events (src/capacity/rate.ts) are judged on the fleet's counts and written by compare-and-set. */
export class SendPacer {
  #state: RateState | undefined;
  /** The budget's last reply, and how far the server's clock is from this process's. */
  #reply = UNREAD;
  #offset = 0;
  #started = false;
  #closed = false;
  #taking = false;
  #writing = false;
  #roomUntil = 0;
  #lastSend = -Infinity;
  #lastCall = 0;
  /** Requests sent on room and not yet charged (and when the first went), answers not yet counted. */
  #told = { ...NOTHING_TOLD };
  #owedSince = 0;
  /** Refusals not yet judged: the latest send time among them (the server's clock), the least wait asked. */
  #refusal: policy.Refusal | undefined;
  /** The slowest answer in this window of RECOVER_MS and the one before, and when this one began. */
  #slowest = [0, 0];
  #windowAt = 0;
  #cappedAt = -Infinity;
  readonly #waiting: Waiter[] = [];
  readonly #clock: () => number;
  readonly #timer: (fn: () => void, ms: number) => void;

  constructor(private readonly options: PacerOptions) {
    this.#clock = options.clock ?? Date.now;
    this.#timer = options.timer ?? ((fn, ms) => setTimeout(fn, ms));
  }

  /** Resolves at this request's send time; its answer is given back with the ticket, exactly once. */
  acquire(): Promise<SendTicket> {
    if (this.#closed) return Promise.reject(new RequestHeldBackError("the worker is stopping"));
    const asked = this.#clock();
    return new Promise<SendTicket>((resolve, reject) => {
      const go = (rate: number) => {
        const sentAt = this.#clock();
        if (sentAt > asked) this.options.onHeld?.(sentAt - asked);
        resolve({ sentAt, rate, heldMs: sentAt - asked });
      };
      this.#waiting.push({ go, stop: reject });
      this.#pump();
    });
  }

  /**
   * The process is stopping: every request still waiting for its send time, and every one asked for
   * from now on, fails unsent with RequestHeldBackError (its invoice goes back to the queue, no attempt
   * spent), and the pacer asks Redis nothing more, whatever holds the fleet.
   */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0))
      waiter.stop(new RequestHeldBackError("the worker is stopping"));
  }

  /** A refusal for capacity (429, or 503 with Retry-After) and what it asked to wait (0: nothing). */
  onRefused(ticket: SendTicket, retryAfterMs: number): void {
    this.#told.refused++;
    this.#roomUntil = 0;
    // judged as if sent an answer time and the budget's window earlier: the refusals counted lately
    // are then all of requests sent after the last cut; a hold emptied the window, so a request sent
    // since its end needs no such margin
    const went = ticket.sentAt + this.#offset;
    const sentAt = Math.max(went - Math.max(...this.#slowest) - LATELY_MS, Math.min(went, this.#reply.hold));
    // judged by the latest sent, and a hold for the least wait asked since (rate.ts judges the waits)
    const last = this.#refusal ?? { sentAt: -Infinity, wentAt: -Infinity, retryAfterMs: Infinity };
    const wait = retryAfterMs > 0 ? Math.min(retryAfterMs, last.retryAfterMs) : last.retryAfterMs;
    const [latest, wentAt] = [Math.max(sentAt, last.sentAt), Math.max(went, last.wentAt)];
    this.#refusal = { sentAt: latest, wentAt, retryAfterMs: wait, roundTripMs: Math.max(...this.#slowest) };
    this.#write(undefined);
  }

  /** An accepted request, and how long it took. */
  onAccepted(ticket: SendTicket, latencyMs: number): void {
    this.#told.accepted++;
    this.#roll(ticket.sentAt + latencyMs);
    this.#slowest[0] = Math.max(this.#slowest[0] ?? 0, latencyMs);
    const times = [ticket.sentAt + this.#offset, this.#clock() + this.#offset] as const;
    const state = this.#state && policy.onAccepted(this.#state, times, this.#reply, this.options.settings);
    if (state !== undefined) this.#write(state);
    else this.#pump();
  }

  /**
   * Requests in flight the learned rate needs at the latency seen (Little's law), within [1, max]; before
   * any answer FIRST_FLIGHT at most, so that the first round trip never sends more than a small window.
   */
  concurrency(max: number): number {
    const slowest = Math.max(...this.#slowest);
    if (slowest === 0) return Math.min(max, FIRST_FLIGHT);
    if (this.needFor(slowest, Infinity) > max) this.#cappedAt = this.#clock();
    return this.needFor(slowest, max);
  }

  /** What the learned rate needs in hand for `ms` each (Little's law), within [1, max]. */
  needFor(ms: number, max: number): number {
    return Math.min(policy.concurrencyFor(this.#rate(), ms), max);
  }

  #rate(): number {
    const now = this.#clock() + this.#offset;
    const state = this.#state ?? policy.startState(this.options.settings, now, UNREAD);
    return policy.rateAt(state, now, this.options.settings, this.#reply);
  }

  /** A new window of the slowest answer every RECOVER_MS: the latency seen is that of the last one or two. */
  #roll(now: number): void {
    if (now - this.#windowAt < policy.RECOVER_MS) return;
    this.#slowest = [0, now - this.#windowAt < 2 * policy.RECOVER_MS ? (this.#slowest[0] ?? 0) : 0];
    this.#windowAt = now;
  }

  #pump(): void {
    if (this.#closed) return;
    const now = this.#clock();
    if (now < this.#roomUntil && now + this.#offset >= this.#reply.hold) this.#sendOnRoom(now);
    const { owed, accepted, refused } = this.#told;
    if (this.#taking || (this.#waiting.length === 0 && owed + accepted + refused === 0)) return;
    const due = this.#lastCall + ROOM_MS - now;
    this.#taking = true;
    if (this.#waiting.length === 0 && due > 0) this.#again(due);
    else this.#take(now);
  }

  /** Requests sent at once while the budget has room, spaced at the learned rate; charged later. */
  #sendOnRoom(now: number): void {
    const rate = this.#rate();
    while (this.#waiting.length > 0) {
      const at = Math.max(this.#lastSend + 1000 / rate, now);
      if (at - now > BOOK_AHEAD_MS) return;
      const waiter = this.#waiting.shift();
      if (waiter === undefined) return;
      this.#lastSend = at;
      this.#owedSince = this.#told.owed++ === 0 ? at : this.#owedSince;
      this.#release(waiter, rate, at - now);
    }
  }

  /** Books send times for the requests waiting, and charges and counts what was sent and heard. */
  #take(now: number): void {
    this.#lastCall = now;
    const rate = this.#rate();
    const interval = 1000 / rate;
    const wanted = Math.min(this.#waiting.length, MOST_BOOKED);
    const call = { ...this.#counts(now), wanted, intervalMs: interval, aheadMs: BOOK_AHEAD_MS };
    this.options.budget
      .call(call)
      .then((reply) => {
        if (this.#closed) return;
        this.#absorb(reply);
        for (const [i, waiter] of this.#waiting.splice(0, reply.booked).entries())
          this.#release(waiter, rate, reply.waitMs + i * interval);
        const clock = this.#clock();
        const last = clock + reply.waitMs + (reply.booked - 1) * interval;
        if (reply.booked > 0) this.#lastSend = Math.max(this.#lastSend, last);
        const room = reply.booked === wanted && reply.waitMs <= 0 && reply.hold <= reply.now;
        this.#roomUntil = room ? clock + ROOM_MS : 0;
        // none booked: asked again when one can be, and within the budget's counting window, so that a
        // rate another process wrote (the service back, a hold ended) reaches this one as the counts do
        this.#again(reply.booked > 0 || wanted === 0 ? 0 : Math.min(reply.waitMs, LATELY_MS));
      })
      .catch((error: unknown) => {
        // Redis did not answer: asked again within the counting window, as when none was booked
        if (this.#failed(call, error)) this.#again(LATELY_MS);
      });
  }

  /** What this process has to tell the budget besides a booking; taken now, given back if the call fails. */
  #counts(now: number): BudgetCall & Told {
    const told = this.#told;
    this.#told = { ...NOTHING_TOLD };
    const spanMs = told.owed === 0 ? 0 : Math.max(0, now - this.#owedSince);
    return { ...told, spanMs, capped: now - this.#cappedAt < policy.RECOVER_MS };
  }

  /** A call failed: what it told is told with the next; false once closed (nothing more is asked). */
  #failed(call: BudgetCall & Told, error: unknown): boolean {
    if (this.#closed) return false;
    const told = this.#told;
    if (call.owed > 0 && told.owed === 0) this.#owedSince = this.#clock() - (call.spanMs ?? 0);
    for (const name of Object.keys(told) as (keyof Told)[]) told[name] += call[name];
    this.#roomUntil = 0;
    this.options.onError(error);
    return true;
  }

  /** Under a millisecond, setTimeout's resolution, a send time is now. */
  #release(waiter: Waiter, rate: number, delay: number): void {
    const go = waiter.go.bind(waiter, rate);
    if (delay < 1) go();
    else this.#timer(go, delay);
  }

  #again(ms: number): void {
    const next = () => {
      this.#taking = false;
      this.#pump();
    };
    if (ms <= 0) next();
    else this.#timer(next, ms);
  }

  /** Counts what was heard, writes `state` if still on the version read, and holds the fleet for `holdMs`. */
  #write(state: RateState | undefined, holdMs = 0, from = this.#reply.v, event?: RateEvent): boolean {
    if (this.#writing || this.#closed) return false;
    this.#writing = true;
    const write = state && { from, state: JSON.stringify(state), version: String(state.version) };
    const call = { ...this.#counts(this.#clock()), holdMs, ...(write && { write }) };
    this.options.budget
      .call(call)
      .then((reply) => {
        this.#writing = false;
        // the state stored is this process's: its compare-and-set won, so no other process tells it
        if (event !== undefined && write !== undefined && reply.state === write.state)
          this.options.onEvent?.(event);
        if (!this.#closed) this.#absorb(reply);
      })
      .catch((error: unknown) => {
        this.#writing = false;
        this.#failed(call, error);
      });
    return true;
  }

  #absorb(reply: BudgetReply): void {
    this.#offset = reply.now - this.#clock();
    this.#reply = reply;
    const state = policy.parseRateState(reply.state, reply.now, reply.hold);
    if (state === undefined) {
      this.#replace(reply);
      return;
    }
    this.#state = state;
    const { settings } = this.options;
    if (!this.#started) {
      this.#started = true;
      const resumed = policy.onResume(state, reply.seen, reply.now, reply, settings);
      if (resumed !== undefined && this.#write(resumed)) return;
    }
    const refusal = this.#refusal;
    if (refusal !== undefined) {
      const judged = policy.onRefused(state, refusal, reply, reply.now, settings);
      const { rate, max, at } = judged?.state ?? state;
      const event: RateEvent = judged?.holdMs
        ? { kind: "hold", until: at, rate }
        : { kind: "cut", rate, plateau: max };
      if (judged === undefined || this.#write(judged.state, judged.holdMs, reply.v, event))
        this.#refusal = undefined;
      return;
    }
    const probed = policy.onProbed(state, reply, settings);
    if (probed !== undefined) this.#write(probed);
  }

  /**
   * The stored state is missing (deleted, a Redis restarted without persistence), garbled, out of range
   * or dated ahead: replaced at once, never trusted nor left empty, by this process's last good state,
   * or with none a slow start from the start rate; by compare-and-set, so of several processes one wins.
   */
  #replace(reply: BudgetReply): void {
    const stored = Number(reply.v);
    const last = this.#state;
    const version = Math.max(Number.isSafeInteger(stored) ? stored : 0, last?.version ?? 0) + 1;
    const safe =
      last !== undefined && last.at <= Math.max(reply.now, reply.hold)
        ? { ...last, version }
        : policy.startState(this.options.settings, reply.now, reply, version);
    this.#state = safe;
    this.#write(safe, 0, reply.v);
  }
}
