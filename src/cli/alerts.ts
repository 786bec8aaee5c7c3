import { apiKeySetting } from "../config/api-key-setting.js";
import type { Config } from "../config/load.js";
import { redisTarget } from "../config/redis-target.js";
import { BatchStore, type BatchMeta } from "../ledger/batch-store.js";
import { createRedis, endConnection } from "../queue/connection.js";
import { StuckBatches } from "../ledger/stuck-batches.js";
import type { Logger } from "../log/logger.js";
import {
  apiKeyRefusedNotice,
  FIRST_ERRORS_MAX,
  runNotice,
  type NoticeContext,
} from "../ops/notify/message.js";
import { Notifier } from "../ops/notify/notifier.js";
import { startStuckWatch } from "../ops/notify/stuck-watch.js";
import { webhookSender } from "../ops/notify/webhook-sender.js";
import type { BatchRowsDeps } from "../results/batch-rows.js";
import { firstErrors } from "../results/first-errors.js";
import type { NightlyOutcome } from "../use-cases/nightly-pass.js";
import { countsOf } from "./summary-table.js";

/** How long a process that ends waits for its alerts: three attempts of 5 s with backoff, and some slack. */
export const ALERT_DRAIN_MS = 30_000;

/** The process's alerts: to NOTIFY_WEBHOOK_URL when it is set, nowhere otherwise. */
export function createNotifier(config: Config, logger: Logger): Notifier {
  const url = config.notifyWebhookUrl;
  if (url === undefined) return new Notifier(undefined);
  const secrets = config.invoiceApiKey === undefined ? [] : [config.invoiceApiKey];
  return new Notifier(webhookSender({ url, secrets, logger }));
}

export function noticeContext(config: Config): NoticeContext {
  return { queuePrefix: config.queuePrefix, consoleUrl: config.consoleUrl, now: new Date() };
}

/** The submission hook that announces a refused API key, from the one process that recorded it first. */
export function onApiKeyRefused(
  config: Config,
  notifier: Notifier,
): (httpStatus: number, detail: string, first: boolean) => void {
  return (httpStatus, detail, first) => {
    if (first)
      notifier.notify(apiKeyRefusedNotice(httpStatus, detail, noticeContext(config), apiKeySetting(config)));
  };
}

/**
 * The alert of a `run` that ended with exit 1 or 2 (none for 0). A run ended by a refused key sends
 * none: the refusal is announced once, by the process that recorded it (onApiKeyRefused).
 */
export async function notifyPassOutcome(
  deps: BatchRowsDeps & { readonly config: Config; readonly notifier: Notifier; readonly logger: Logger },
  outcome: NightlyOutcome,
  exitCode: number,
): Promise<void> {
  if (!deps.notifier.enabled || exitCode === 0 || outcome.kind === "api-key-refused") return;
  const batches = outcome.kind === "finished" ? outcome.batches : [];
  const facts = [];
  for (const meta of batches) {
    const counts = countsOf(meta);
    const problems = counts.rejected + counts.failed + counts.conflict;
    facts.push({
      file: meta.file,
      id: meta.id,
      state: meta.state,
      counts,
      firstErrors: problems > 0 ? await readFirstErrors(deps, meta) : [],
    });
  }
  deps.notifier.notify(runNotice(exitCode, facts, reasonOf(outcome), noticeContext(deps.config)));
}

async function readFirstErrors(deps: BatchRowsDeps & { readonly logger: Logger }, meta: BatchMeta) {
  try {
    return await firstErrors(deps, meta, FIRST_ERRORS_MAX);
  } catch (error) {
    // The alert still goes, with the counts; the report has the rows.
    deps.logger.warn(
      { batch: meta.id, err: error },
      "could not read the first errors of the batch for the alert",
    );
    return [];
  }
}

function reasonOf(outcome: NightlyOutcome): string | undefined {
  switch (outcome.kind) {
    case "finished": {
      const said: string[] = [];
      const changed = outcome.batches.filter((b) => b.state === "changed");
      if (changed.length > 0)
        said.push(
          `Changed after they were claimed (not reported; taken again, whole, once settled): ` +
            `${changed.map((b) => `${b.file} (batch ${b.id}${b.replaced_by === undefined ? "" : `, replaced by ${b.replaced_by}`})`).join(", ")}.`,
        );
      if (outcome.growing.length > 0)
        said.push(
          `Still being written after their claim, rows not sent yet (the next pass takes them again): ` +
            `${outcome.growing.map((g) => g.file).join(", ")}.`,
        );
      return said.length > 0
        ? said.join(" ")
        : "Some rows were rejected, failed or in conflict: the reports say which.";
    }
    case "stopped":
      return (
        `${outcome.why === "interrupted" ? "Interrupted" : "Deadline passed"} with ${outcome.pending} invoice(s) ` +
        `not final yet${outcome.redisDown ? " (Redis unreachable)" : ""}` +
        (outcome.refusingForCapacity
          ? "; the invoice service is refusing for capacity (429 to every request: a quota spent?)"
          : "") +
        "; the next run continues them."
      );
    case "failed":
      return outcome.error.message;
    case "nothing-to-do":
    case "api-key-refused":
      return undefined;
  }
}

export interface ServiceAlerts {
  readonly notifier: Notifier;
  /** Stops watching for stuck batches, then waits (bounded) for the alerts under way. */
  close(): Promise<void>;
}

/**
 * The alerts of `start` and `worker`: a refused API key (through `onApiKeyRefused`) and batches still
 * unfinished NOTIFY_STUCK_AFTER after their drop, checked now and then periodically on a Redis
 * connection of their own. Nothing runs when NOTIFY_WEBHOOK_URL is not set.
 */
export function startServiceAlerts(config: Config, logger: Logger): ServiceAlerts {
  const notifier = createNotifier(config, logger);
  if (!notifier.enabled) return { notifier, close: () => Promise.resolve() };
  const redis = createRedis(redisTarget(config), "producer", "invoice-relay-alerts");
  // An outage is what a failed check logs; ioredis need not print its own.
  redis.on("error", () => undefined);
  const watch = startStuckWatch({
    stuck: new StuckBatches(redis, config.queuePrefix),
    batches: new BatchStore(redis, config.queuePrefix),
    notifier,
    logger,
    stuckAfterMs: config.notifyStuckAfter,
    context: () => noticeContext(config),
  });
  return {
    notifier,
    close: async () => {
      const stopped = watch.stop();
      // A check waiting on an unreachable Redis ends here rather than holding the shutdown up.
      endConnection(redis);
      await stopped;
      await notifier.drain(ALERT_DRAIN_MS);
    },
  };
}
