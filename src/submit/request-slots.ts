import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import type { Answer } from "./answer.js";
import { RequestHeldBackError } from "./errors/request-held-back-error.js";
import type { Submitter } from "./submitter.js";

/**
 * At most `limit` requests in flight to the service; the others wait their turn, first come first
 * served. The limit can change at any time (flow control moves it); a lower limit lets the requests
 * already in flight finish and holds the next ones back. `hold` turns every waiting and new request
 * away unsent for a while.
 */
export class RequestSlots {
  #limit: number;
  #inUse = 0;
  #heldUntil = 0;
  readonly #waiting: Waiter[] = [];

  constructor(
    limit: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#limit = Math.max(1, limit);
  }

  get inUse(): number {
    return this.#inUse;
  }

  setLimit(limit: number): void {
    this.#limit = Math.max(1, limit);
    this.#wake();
  }

  /** For `ms`, no request is sent: those waiting and those that come fail with RequestHeldBackError. */
  hold(ms: number): void {
    this.#heldUntil = Math.max(this.#heldUntil, this.now() + ms);
    for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift())
      next.reject(new RequestHeldBackError());
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.now() < this.#heldUntil) throw new RequestHeldBackError();
    if (this.#inUse < this.#limit) this.#inUse++;
    else
      await new Promise<void>((resolve, reject) => {
        this.#waiting.push({ resolve, reject }); // resolved with the slot handed over
      });
    try {
      return await work();
    } finally {
      this.#inUse--;
      this.#wake();
    }
  }

  #wake(): void {
    while (this.#inUse < this.#limit) {
      const next = this.#waiting.shift();
      if (next === undefined) return;
      this.#inUse++;
      next.resolve();
    }
  }
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * A submitter that sends only within a slot. The request's own deadline starts when the slot is
 * taken, so waiting for a slot never counts as a slow service.
 */
export function withRequestSlots(submitter: Submitter, slots: RequestSlots): Submitter {
  return {
    submit: (idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer> =>
      slots.run(() => submitter.submit(idempotencyKey, body, trace)),
    close: (abandon) => submitter.close(abandon),
  };
}
