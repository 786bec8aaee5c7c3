/**
 * Files a pass works on at once. A file of a few invoices spends nearly all its time waiting: a dozen
 * Redis round trips (batch record, lease, registration, enqueue, finish) and as many file-system calls,
 * each short, one after the other. By Little's law (in flight = rate × latency) the files under way set
 * the rate; sixteen cover that chain of waits about once over, so Redis, the disk and this process stay
 * busy, while a pass of large files holds no more than sixteen files' chunks of work at a time.
 */
export const FILES_IN_FLIGHT = 16;

/**
 * At most `limit` pieces of work under way; `start` waits for a free place, so work starts in the order
 * it is given. A failure stops nothing under way: `settle` waits for all of it, then throws the first
 * failure, so no file is left half-done by a pass that gives up.
 */
export class InFlight {
  readonly #underWay = new Set<Promise<void>>();
  #failure: { readonly error: unknown } | undefined;

  constructor(private readonly limit: number = FILES_IN_FLIGHT) {}

  /** Whether a piece of work has failed: a caller then starts no more. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  async start(work: () => Promise<void>): Promise<void> {
    while (this.#underWay.size >= this.limit) await Promise.race(this.#underWay);
    const running: Promise<void> = work()
      .catch((error: unknown) => {
        this.#failure ??= { error };
      })
      .finally(() => this.#underWay.delete(running));
    this.#underWay.add(running);
  }

  /** Waits for every piece of work under way; throws the first failure, if any. */
  async settle(): Promise<void> {
    while (this.#underWay.size > 0) await Promise.all(this.#underWay);
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}

/** `work` over `items`, at most `limit` at once, started in order; the results in the items' order. */
export async function mapInFlight<T, R>(
  items: readonly T[],
  work: (item: T) => Promise<R>,
  limit: number = FILES_IN_FLIGHT,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  const window = new InFlight(limit);
  for (const [i, item] of items.entries()) {
    if (window.failed) break;
    await window.start(async () => {
      results[i] = await work(item);
    });
  }
  await window.settle();
  return results;
}
