import type { Retention, SweepOutcome } from "../ledger/retention.js";
import type { Logger } from "../log/logger.js";

/** The longest time between sweeps; shorter retentions are swept twice per retention. */
const MAX_INTERVAL_MS = 10 * 60_000;
const MIN_INTERVAL_MS = 1000;

export interface RetentionSweeps {
  /** Waits for a sweep under way, then stops. */
  stop(): Promise<void>;
}

/**
 * Runs the ledger's retention sweep in every process that submits (`run`, `start`, `worker`): at once,
 * then every half retention (at most every 10 minutes), one sweep at a time. A batch whose retention has
 * passed is thus removed at the latest during the next pass of any of them. A sweep that fails (Redis
 * away) is logged and tried again next time; it leaves nothing half done that the next one cannot finish.
 */
export function startRetentionSweeps(
  retention: Retention,
  logger: Logger,
  onSwept?: (outcome: SweepOutcome) => void,
): RetentionSweeps {
  const intervalMs = Math.max(MIN_INTERVAL_MS, Math.min(MAX_INTERVAL_MS, retention.retentionMs / 2));
  let running: Promise<void> | undefined;
  let stopped = false;
  const sweep = () => {
    if (running !== undefined || stopped) return;
    running = retention
      .sweep()
      .then((outcome) => {
        if (outcome.batches > 0)
          logger.info(
            { batches: outcome.batches, records: outcome.records },
            "retention: removed batches reported longer ago than RESULTS_RETENTION",
          );
        onSwept?.(outcome);
      })
      .catch((error: unknown) => {
        logger.warn({ err: error }, "retention sweep failed; it runs again later");
      })
      .finally(() => {
        running = undefined;
      });
  };
  sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
