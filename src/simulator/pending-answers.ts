import type { ServerResponse } from "node:http";

/**
 * Answers waiting out their injected latency. Kept so that `close()` and `reset()` can cancel them at once
 * instead of leaving timers that answer into a closed or reset simulator.
 */
export class PendingAnswers {
  readonly #pending = new Map<NodeJS.Timeout, Pending>();

  get size(): number {
    return this.#pending.size;
  }

  /** Runs `answer` after `ms`; `ms` 0 runs it now, so a simulator without latency adds no timer. */
  after(ms: number, res: ServerResponse, answer: () => void, onCancel: () => void = noop): void {
    if (ms <= 0) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      this.#pending.delete(timer);
      answer();
    }, ms);
    this.#pending.set(timer, { res, onCancel });
  }

  /** Cancels every waiting answer and destroys its connection; the requests have no effect. */
  cancelAll(): void {
    for (const [timer, { res, onCancel }] of this.#pending) {
      clearTimeout(timer);
      onCancel();
      res.socket?.destroy();
    }
    this.#pending.clear();
  }
}

function noop(): void {}

interface Pending {
  readonly res: ServerResponse;
  readonly onCancel: () => void;
}
