/**
 * How hard a worker pushes, decided from answers alone (pure, no timers):
 * - slow start: one request in flight, doubling with each success up to the configured concurrency, so
 *   a refused key or a dead service costs a handful of requests, not a full window;
 * - a 429 is not seen here: the fleet's learned rate (src/capacity) answers it, and it never
 *   counts towards an outage;
 * - a sustained outage (this many retryable failures in a row) asks for a cool-down that grows with
 *   each outage and resets on the first success, and drops the window back to one.
 */
export interface FlowControlOptions {
  readonly maxConcurrency: number;
  readonly outageThreshold: number;
  readonly coolDownBaseMs: number;
  readonly coolDownCapMs: number;
}

export class FlowControl {
  private window = 1;
  private failuresInRow = 0;
  private outages = 0;

  constructor(private readonly options: FlowControlOptions) {}

  get concurrency(): number {
    return this.window;
  }

  onSuccess(): void {
    this.failuresInRow = 0;
    this.outages = 0;
    this.window = Math.min(this.options.maxConcurrency, this.window * 2);
  }

  /** A final failure (4xx) is an answer, not an outage: it neither grows nor shrinks the window. */
  onFinalFailure(): void {
    this.failuresInRow = 0;
  }

  /** Returns the cool-down to apply now, in ms, or undefined. */
  onRetryable(): number | undefined {
    this.failuresInRow++;
    if (this.failuresInRow < this.options.outageThreshold) return undefined;
    this.failuresInRow = 0;
    this.window = 1;
    const coolDown = Math.min(
      this.options.coolDownCapMs,
      this.options.coolDownBaseMs * 2 ** Math.min(this.outages, 30),
    );
    this.outages++;
    return coolDown;
  }

  onApiKeyRefused(): void {
    this.window = 1;
  }
}
