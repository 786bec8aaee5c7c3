/**
 * At most `limit` pieces of work under way: starting one more first waits for the oldest. A failure
 * is raised when its work is waited for (by a later `start` or by `settle`), in the order started, and
 * never counts as unhandled meanwhile.
 */
export class WorkWindow {
  private readonly underWay: Promise<unknown>[] = [];

  constructor(private readonly limit: number) {}

  async start(work: () => Promise<unknown>): Promise<void> {
    if (this.underWay.length >= this.limit) await this.underWay.shift();
    const started = work();
    started.catch(() => undefined);
    this.underWay.push(started);
  }

  /** Waits for all work under way, oldest first. */
  async settle(): Promise<void> {
    for (let next = this.underWay.shift(); next !== undefined; next = this.underWay.shift()) await next;
  }
}
