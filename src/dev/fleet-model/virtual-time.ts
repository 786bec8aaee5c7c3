/**
 * Time that passes only as the model says: callbacks run in time order, and the promises they settle
 * settle before the next one runs. A night of a fleet's pacers takes a second of real time, the same
 * every time.
 */
export class VirtualTime {
  now: number;
  #seq = 0;
  readonly #events: { at: number; seq: number; fn: () => void }[] = [];

  constructor(start: number) {
    this.now = start;
  }

  /** Runs `fn` `ms` from now. */
  at(ms: number, fn: () => void): void {
    const event = { at: this.now + Math.max(0, ms), seq: this.#seq++, fn };
    // binary insertion keeps the list ordered by (at, seq)
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = this.#events[mid];
      if (m !== undefined && (m.at < event.at || (m.at === event.at && m.seq < event.seq))) lo = mid + 1;
      else hi = mid;
    }
    this.#events.splice(lo, 0, event);
  }

  /** A promise that settles `ms` from now. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.at(ms, resolve);
    });
  }

  /** Runs the callbacks until `done` says so, none are left, or `limitMs` has passed. */
  async run(done: () => boolean, limitMs: number): Promise<void> {
    const end = this.now + limitMs;
    while (!done() && this.now < end) {
      const next = this.#events.shift();
      if (next === undefined) return;
      this.now = next.at;
      next.fn();
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
