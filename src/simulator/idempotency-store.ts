/** A finished answer, kept so that a repeat of its key is answered byte for byte the same. */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
  readonly correlationId: string;
}

interface KeyRecord {
  /** Attempts that passed validation, counted even across `forget()`: they seed the fault draws. */
  attempts: number;
  /** sha256 of the raw body the key was first processed with. */
  bodySha256: string | undefined;
  inFlight: boolean;
  answer: StoredAnswer | undefined;
}

export type Admission =
  | { readonly kind: "new" }
  | { readonly kind: "replay"; readonly answer: StoredAnswer }
  | { readonly kind: "key-reused" }
  | { readonly kind: "key-in-flight" };

/** What the IETF Idempotency-Key draft asks a resource to remember per key. Memory: one record per key. */
export class IdempotencyStore {
  readonly #records = new Map<string, KeyRecord>();
  #inFlight = 0;

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Counts one more attempt of `key` and returns its 1-based number. */
  nextAttempt(key: string): number {
    const record = this.#records.get(key);
    if (record !== undefined) return ++record.attempts;
    this.#records.set(key, { attempts: 1, bodySha256: undefined, inFlight: false, answer: undefined });
    return 1;
  }

  /** Decides what a request with `key` and this body gets; `new` marks the key in flight. */
  admit(key: string, bodySha256: string): Admission {
    let record = this.#records.get(key);
    if (record === undefined) {
      record = { attempts: 0, bodySha256: undefined, inFlight: false, answer: undefined };
      this.#records.set(key, record);
    }
    if (record.bodySha256 !== undefined && record.bodySha256 !== bodySha256) return { kind: "key-reused" };
    if (record.inFlight) return { kind: "key-in-flight" };
    if (record.answer !== undefined) return { kind: "replay", answer: record.answer };
    record.bodySha256 = bodySha256;
    record.inFlight = true;
    this.#inFlight++;
    return { kind: "new" };
  }

  /** Ends the in-flight request of `key` with its answer. */
  complete(key: string, answer: StoredAnswer): void {
    const record = this.#records.get(key);
    if (record === undefined || !record.inFlight) return; // reset or forgotten meanwhile
    record.inFlight = false;
    record.answer = answer;
    this.#inFlight--;
  }

  /** Ends the in-flight request of `key` without an answer (it was cancelled); the key is free again. */
  abandon(key: string): void {
    const record = this.#records.get(key);
    if (record === undefined || !record.inFlight) return;
    record.inFlight = false;
    record.bodySha256 = undefined;
    this.#inFlight--;
  }

  /** Forgets every finished key, as when the service's key retention expires; in-flight keys stay. */
  forgetFinished(): number {
    let forgotten = 0;
    for (const record of this.#records.values()) {
      if (record.inFlight || record.answer === undefined) continue;
      record.answer = undefined;
      record.bodySha256 = undefined;
      forgotten++;
    }
    return forgotten;
  }

  clear(): void {
    this.#records.clear();
    this.#inFlight = 0;
  }
}
