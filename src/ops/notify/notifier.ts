import type { Notice } from "./notice.js";
import type { NoticeSender } from "./webhook-sender.js";

/**
 * Sends alerts in the background and keeps track of those under way, so a process that ends (a `run`,
 * a shutdown) can wait for them, for a bounded time, before it exits.
 */
export class Notifier {
  readonly #inFlight = new Set<Promise<void>>();

  constructor(private readonly sender: NoticeSender | undefined) {}

  /** Whether alerts go anywhere (NOTIFY_WEBHOOK_URL is set). */
  get enabled(): boolean {
    return this.sender !== undefined;
  }

  notify(notice: Notice): void {
    if (this.sender === undefined) return;
    const sending = this.sender.send(notice).catch(() => undefined);
    this.#inFlight.add(sending);
    void sending.finally(() => this.#inFlight.delete(sending));
  }

  /** Resolves when every alert under way is delivered or given up on, or after `limitMs`. */
  async drain(limitMs: number): Promise<void> {
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limitMs);
    });
    try {
      await Promise.race([Promise.all([...this.#inFlight]), limit]);
    } finally {
      clearTimeout(timer);
    }
  }
}
