import type { RedisClient } from "../ledger/redis-client.js";
import { recordRateSample } from "../ledger/send-series.js";
import type { Logger } from "../log/logger.js";
import { readSendRate, type RateSettings } from "../queue/send-rate-view.js";

/** How often the learned rate is noted in the series: its resolution, one second as the answers'. */
export const SAMPLE_MS = 1000;

export interface RateSamplerDeps {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly settings: RateSettings;
  /** RESULTS_RETENTION: the samples are kept as long as the answers of their hour. */
  readonly retentionMs: number;
  readonly logger: Logger;
}

/**
 * Notes the learned rate and the fleet's sending rate in the series every SAMPLE_MS, as the learned
 * rate's read model (src/queue/send-rate-view.ts) gives them, while the fleet sends: what a pass's chart
 * draws as its learned rate and what its record keeps as the learned rate at its end. `run` samples during its pass,
 * `start` while it runs; seconds in which nothing was sent are not noted. Two round trips a second.
 */
export function startRateSampler(deps: RateSamplerDeps): { stop(): void } {
  let busy = false;
  let sending = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    sample()
      .catch((error: unknown) => {
        deps.logger.debug({ err: error }, "the learned rate could not be noted in the series");
      })
      .finally(() => {
        busy = false;
      });
  }, SAMPLE_MS);
  timer.unref();

  async function sample(): Promise<void> {
    if (deps.redis.status !== "ready") return;
    const view = await readSendRate(deps.redis, deps.prefix, deps.settings);
    if (view === undefined) return;
    // The second after sending stops is noted too, so a chart's line comes down to what was sent.
    const wasSending = sending;
    sending = view.fleetSentPerSec > 0;
    if (!sending && !wasSending) return;
    const sample = { learned: view.learnedPerSec, sent: view.fleetSentPerSec };
    await recordRateSample(deps.redis, deps.prefix, Date.now(), sample, deps.retentionMs);
  }

  return {
    stop: () => {
      clearInterval(timer);
    },
  };
}
