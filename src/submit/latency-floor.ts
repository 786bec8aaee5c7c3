/**
 * Whether answers come well above the fastest seen lately: the early sign of a service queueing requests,
 * before it refuses any. The floor is the least latency of the current and the previous window, so it
 * follows a service that became slower for good; the level is a moving average of recent answers.
 */
export class LatencyFloor {
  #floor = Infinity;
  #previousFloor = Infinity;
  #windowStart: number;
  #average: number | undefined;

  constructor(
    now: number,
    private readonly windowMs = 10_000,
    /** Latency counts as congested above `factor` × floor + `marginMs`. */
    private readonly factor = 2,
    private readonly marginMs = 5,
  ) {
    this.#windowStart = now;
  }

  /** Records one answer's latency; true when the recent average is well above the floor. */
  observe(latencyMs: number, now: number): boolean {
    if (now - this.#windowStart >= this.windowMs) {
      this.#previousFloor = this.#floor;
      this.#floor = Infinity;
      this.#windowStart = now;
    }
    this.#floor = Math.min(this.#floor, latencyMs);
    this.#average = this.#average === undefined ? latencyMs : this.#average * 0.9 + latencyMs * 0.1;
    return this.#average > this.floor * this.factor + this.marginMs;
  }

  get floor(): number {
    return Math.min(this.#floor, this.#previousFloor);
  }

  /** The recent average latency (0 before any answer). */
  get average(): number {
    return this.#average ?? 0;
  }
}
