/** What became of one attempt at `POST /api/v1/invoices`. */
export type AttemptOutcome =
  | "effect"
  | "replay"
  | "key-reused"
  | "key-in-flight"
  | "fault-error"
  | "fault-throttle"
  | "over-capacity"
  | "rejected";

export interface Attempt {
  /** Epoch milliseconds when the answer was decided. */
  readonly at: number;
  /** The status answered, or that would have been answered when `lost`. */
  readonly status: number;
  readonly outcome: AttemptOutcome;
  /** The connection was destroyed instead of answered (the effect, if any, was committed). */
  readonly lost: boolean;
  readonly idempotencyKey: string | undefined;
  readonly bodySha256: string | undefined;
  /** Whether the bearer key was the accepted one; the key itself is never kept. */
  readonly authorized: boolean;
  /** The W3C `traceparent` header as received (a client's trace, for tests), when one came. */
  readonly traceparent: string | undefined;
}

/** The last `capacity` attempts, oldest dropped first, so memory stays bounded under any load. */
export class RequestLog {
  readonly #entries: Attempt[] = [];
  #next = 0;
  #dropped = 0;

  constructor(readonly capacity: number) {}

  get dropped(): number {
    return this.#dropped;
  }

  add(entry: Attempt): void {
    if (this.#entries.length < this.capacity) {
      this.#entries.push(entry);
      return;
    }
    this.#entries[this.#next] = entry;
    this.#next = (this.#next + 1) % this.capacity;
    this.#dropped++;
  }

  /** Attempts of `key`, oldest first. A linear scan: this is a test endpoint, not a hot path. */
  forKey(key: string): Attempt[] {
    const out: Attempt[] = [];
    const n = this.#entries.length;
    for (let i = 0; i < n; i++) {
      const entry = this.#entries[(this.#next + i) % n];
      if (entry !== undefined && entry.idempotencyKey === key) out.push(entry);
    }
    return out;
  }

  clear(): void {
    this.#entries.length = 0;
    this.#next = 0;
    this.#dropped = 0;
  }
}
