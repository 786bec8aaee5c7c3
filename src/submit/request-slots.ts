import type { Answer } from "./answer.js";
import type { Submitter } from "./submitter.js";

/**
 * At most `limit` requests in flight to the service; the others wait their turn, first come first
 * served. The limit can change at any time (flow control moves it); a lower limit lets the requests
 * already in flight finish and holds the next ones back.
 */
export class RequestSlots {
  #limit: number;
  #inUse = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  get inUse(): number {
    return this.#inUse;
  }

  setLimit(limit: number): void {
    this.#limit = Math.max(1, limit);
    this.#wake();
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#inUse < this.#limit) this.#inUse++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve)); // the slot is handed over
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
      next();
    }
  }
}

/**
 * A submitter that sends only within a slot. The request's own deadline starts when the slot is
 * taken, so waiting for a slot never counts as a slow service.
 */
export function withRequestSlots(submitter: Submitter, slots: RequestSlots): Submitter {
  return {
    submit: (idempotencyKey: string, body: string): Promise<Answer> =>
      slots.run(() => submitter.submit(idempotencyKey, body)),
    close: () => submitter.close(),
  };
}
