import type { BatchStore } from "../../ledger/batch-store.js";
import type { StuckBatches } from "../../ledger/stuck-batches.js";
import type { Logger } from "../../log/logger.js";
import { isBatchFinished } from "../../ledger/statuses.js";
import { stuckBatchNotice, type NoticeContext } from "./message.js";
import type { Notifier } from "./notifier.js";

export interface StuckWatchDeps {
  readonly stuck: StuckBatches;
  readonly batches: BatchStore;
  readonly notifier: Notifier;
  readonly logger: Logger;
  readonly stuckAfterMs: number;
  readonly context: () => NoticeContext;
  /** Between checks; default: NOTIFY_STUCK_AFTER, at least 1 s and at most a minute. */
  readonly intervalMs?: number;
}

export interface StuckWatch {
  /** One check now: every batch not reported NOTIFY_STUCK_AFTER after its drop and not announced yet. */
  check(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Checks at once and then periodically for batches still unfinished NOTIFY_STUCK_AFTER after their drop,
 * and announces each once: every `start` and `worker` watches, the ledger's marker (SET NX) makes one of
 * them send it. A failed check (Redis away) is logged and tried again at the next tick.
 */
export function startStuckWatch(deps: StuckWatchDeps): StuckWatch {
  const intervalMs = deps.intervalMs ?? Math.min(60_000, Math.max(1000, deps.stuckAfterMs));
  let running: Promise<unknown> = Promise.resolve();
  const check = async (): Promise<number> => {
    // Redis's clock, that of the batches' creation times: a skewed watcher alerts neither early nor late
    const now = await deps.stuck.now();
    let sent = 0;
    for (const id of await deps.stuck.unfinishedSince(now - deps.stuckAfterMs)) {
      const meta = await deps.batches.get(id);
      if (meta === undefined || isBatchFinished(meta.state)) continue;
      if (!(await deps.stuck.claimNotice(id))) continue;
      deps.logger.warn(
        { batch: id, file: meta.file, state: meta.state, pending: meta.pending ?? 0 },
        "batch not finished NOTIFY_STUCK_AFTER after its drop; announcing it",
      );
      deps.notifier.notify(
        stuckBatchNotice(
          {
            file: meta.file,
            id,
            state: meta.state,
            counts: { pending: meta.pending ?? 0 },
            firstErrors: [],
          },
          now - meta.created_at,
          deps.stuckAfterMs,
          deps.context(),
        ),
      );
      sent++;
    }
    return sent;
  };
  const tick = () => {
    running = running.then(check).catch((error: unknown) => {
      deps.logger.warn({ err: error }, "checking for stuck batches failed; trying again at the next check");
    });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    check,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
