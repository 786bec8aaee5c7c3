/**
 * Whether answers come well above their usual latency: the early sign of a service queueing requests,
 * before it refuses any. The level is a moving average of recent answers; the floor is the least that
 * average was in the current and the previous window, so it follows a service that became slower for
 * good. Both are averages, not single answers: a service whose latency is spread widely (0 to 50 ms at
 * random) has a fastest answer near zero, and measured against that it would look queued all the time.
 */
export class LatencyFloor {
  #floor = Infinity;
  #previousFloor = Infinity;
  #windowStart: number;
  #average: number | undefined;
  #answers = 0;

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
    this.#average =
      this.#average === undefined ? latencyMs : this.#average * (1 - WEIGHT) + latencyMs * WEIGHT;
    this.#answers++;
    // The first answers make the average; until then it is one answer's latency, not a level.
    if (this.#answers < WARM_UP) return false;
    this.#floor = Math.min(this.#floor, this.#average);
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

/** The moving average's weight of one answer. */
const WEIGHT = 0.05;
/** Answers before the average counts as a level (two of its time constants). */
const WARM_UP = 40;
