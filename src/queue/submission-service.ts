import type { Queue, Worker } from "bullmq";
import type { SubmitConfig } from "../config/load.js";
import { redisTarget } from "../config/redis-target.js";
import type { Logger } from "../log/logger.js";
import { BatchStore } from "../ledger/batch-store.js";
import type { LedgerClock } from "../ledger/clock.js";
import { RedisLedger } from "../ledger/redis-ledger.js";
import { Retention } from "../ledger/retention.js";
import type { Ledger } from "../ledger/ledger.js";
import { HttpSubmitter } from "../submit/http-submitter.js";
import type { Submitter } from "../submit/submitter.js";
import type { AttemptObservation } from "../submit/attempt-labels.js";
import { observeAttempts } from "../submit/observed-submitter.js";
import type { SubmitOutcome } from "../submit/submit-invoice.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";
import { createRedis, endConnection } from "./connection.js";
import { closeWithin } from "./leave-jobs.js";
import { createInvoiceQueue } from "./invoice-queue.js";
import type { InvoiceJobData } from "./job-data.js";
import { clearApiKeyRefusal } from "./api-key-refusal.js";
import { apiKeyInService } from "./api-key-in-service.js";
import { startRetentionSweeps } from "./retention-sweeps.js";
import { createSubmitWorker } from "./submit-worker.js";
import { SendBudget } from "../ledger/send-budget.js";
import { SentCount } from "../ledger/sent-count.js";
import { SendPacer, type RateEvent } from "../capacity/index.js";
import { rateSettingsOf } from "./send-rate-view.js";

export interface SubmissionService {
  readonly worker: Worker<InvoiceJobData>;
  readonly queue: Queue<InvoiceJobData>;
  readonly ledger: Ledger;
  /** The fleet's send budget as this process sees it (SUBMIT_RATE_ADAPTIVE), else undefined. */
  readonly pacer: SendPacer | undefined;
  /** Stops taking jobs, lets in-flight requests finish within `graceMs`, then closes everything. */
  close(graceMs: number): Promise<void>;
}

export type { AttemptObservation, RetryReason, StatusClass } from "../submit/attempt-labels.js";
export type { SubmitOutcome } from "../submit/submit-invoice.js";
export { finalStatusWritten } from "../submit/submit-invoice.js";
export type { SendPacer } from "../capacity/index.js";

export interface SubmissionHooks {
  /**
   * The service refused the API key; `first` when this process recorded the refusal first (of all the
   * processes sharing the Redis): the one to announce it.
   */
  readonly onApiKeyRefused?: (httpStatus: number, detail: string, first: boolean) => void;
  readonly onOutcome?: (key: string, outcome: SubmitOutcome) => void;
  /** After every HTTP request to the service (metrics); called on the hot path, so it must be cheap. */
  readonly onAttempt?: (attempt: AttemptObservation) => void;
  /** A request waited this long for its send time in the fleet's budget (metrics). */
  readonly onHeld?: (ms: number) => void;
  /** How often a key file (INVOICE_API_KEY_FILE) is read again unprompted; POLL_MS when absent (tests). */
  readonly keyFilePollMs?: number;
  /** Replaces the HTTP submitter (tests). */
  readonly submitter?: Submitter;
  /** With tracing on (OTEL_* settings): each attempt and POST is a span of the invoice's trace. */
  readonly tracing?: InvoiceTracing | undefined;
  readonly flow?: {
    readonly outageThreshold: number;
    readonly coolDownBaseMs: number;
    readonly coolDownCapMs: number;
  };
  /**
   * A fixed clock for the ledger's records and batches, from which RESULTS_RETENTION counts (tests move
   * it instead of waiting); Redis's own when absent (src/ledger/clock.ts). Retry-After and the sweeps'
   * interval stay on real time.
   */
  readonly now?: LedgerClock | undefined;
}

/** Starts a submission worker from configuration: connections, ledger, HTTP client, BullMQ worker. */
export async function startSubmission(
  config: SubmitConfig,
  logger: Logger,
  hooks: SubmissionHooks = {},
): Promise<SubmissionService> {
  const target = redisTarget(config);
  const connection = createRedis(target, "worker", "invoice-relay-worker");
  const commands = createRedis(target, "worker", "invoice-relay-store");
  const clock = hooks.now;
  // Each request is counted in the fleet's totals before it goes, each answer (totals and series) by the
  // write that records it.
  const ledger = new RedisLedger(commands, config.queuePrefix, clock, config.resultsRetention);
  const queue = createInvoiceQueue(commands, config.queuePrefix, config.maxAttempts);
  const sentCount = new SentCount(commands, config.queuePrefix);
  const apiKey = apiKeyInService(config, logger, commands, queue, hooks.keyFilePollMs);
  const service =
    hooks.submitter ??
    new HttpSubmitter({
      baseUrl: config.invoiceApiUrl,
      apiKey: apiKey.key,
      connections: config.submitConcurrency,
      requestTimeoutMs: config.requestTimeoutMs,
      responseBodyMaxBytes: config.responseBodyMaxBytes,
      onKeyKept: apiKey.kept,
      counting: () => sentCount.sending(),
    });
  // Observed inside the worker's request slots: the time measured is the request's, not the wait for a
  // slot (metrics, and the attempt the ledger's outbox exports).
  const submitter = observeAttempts(service, hooks.onAttempt);

  // A new process with (possibly) a new key gives the service another chance.
  if (await clearApiKeyRefusal(commands, queue, config.queuePrefix)) {
    logger.info("the API key was refused earlier; resuming submission with the current key");
  }

  const budgetErrors = { loggedAt: 0, suppressed: 0 };
  const pacer = config.submitRateAdaptive
    ? new SendPacer({
        budget: new SendBudget(commands, config.queuePrefix),
        settings: rateSettingsOf(config),
        ...(hooks.onHeld === undefined ? {} : { onHeld: hooks.onHeld }),
        // a cut or a hold, told once for the fleet by the process that wrote it
        onEvent: (event: RateEvent) => {
          const perSec = (rate: number) => `${rate < 10 ? rate.toFixed(1) : Math.round(rate)}/s`;
          if (event.kind === "cut")
            logger.info(
              { rate: event.rate, plateau: event.plateau },
              `the service's refusals (429, or 503 with Retry-After) cut the fleet's rate to ${perSec(event.rate)} (it accepted ${perSec(event.plateau)} lately)`,
            );
          else
            logger.info(
              { until: new Date(event.until).toISOString(), rate: event.rate },
              `the service refuses everything and asked to wait: every process holds until ${new Date(event.until).toISOString()}, then sends at ${perSec(event.rate)}`,
            );
        },
        onError: (error: unknown) => {
          // While Redis is away the pacer asks again every quarter of a second: one line per
          // BUDGET_ERROR_LOG_EVERY_MS says so, with how many were left out.
          const now = Date.now();
          if (now - budgetErrors.loggedAt < BUDGET_ERROR_LOG_EVERY_MS) {
            budgetErrors.suppressed++;
            return;
          }
          logger.warn(
            { err: error, suppressedSinceLast: budgetErrors.suppressed },
            "the fleet's send budget in Redis did not answer; trying again",
          );
          budgetErrors.loggedAt = now;
          budgetErrors.suppressed = 0;
        },
      })
    : undefined;
  const worker = createSubmitWorker({
    pacer,
    connection,
    prefix: config.queuePrefix,
    queue,
    deps: {
      ledger,
      submitter,
      now: Date.now,
      rules: {
        correlationIdHeaders: config.correlationIdHeaders,
        correlationIdFields: config.correlationIdFields,
        rulesetVersionFields: config.rulesetVersionFields,
      },
    },
    logger,
    maxConcurrency: config.submitConcurrency,
    maxAttempts: config.maxAttempts,
    ratePerSec: config.submitRatePerSec,
    backoff: {
      baseMs: config.backoffBaseMs,
      capMs: config.backoffCapMs,
      retryAfterCapMs: config.retryAfterCapMs,
    },
    lockDurationMs: config.lockDurationMs,
    ...(hooks.flow === undefined ? {} : { flow: hooks.flow }),
    onApiKeyRefused: async (httpStatus, detail) => {
      const first = await apiKey.refused(httpStatus, detail);
      hooks.onApiKeyRefused?.(httpStatus, detail, first);
    },
    ...(hooks.onOutcome === undefined ? {} : { onOutcome: hooks.onOutcome }),
    tracing: hooks.tracing,
  });
  // Ready before closable: closing a worker whose blocking connection is still starting crashed the
  // process (BullMQ re-emits the aborted start as an "error" after removing its listeners), as a `run`
  // with nothing to do closed it at once.
  const blockingClient = await worker.waitUntilReady();
  const sweeps = startRetentionSweeps(
    new Retention(
      commands,
      config.queuePrefix,
      new BatchStore(commands, config.queuePrefix, clock),
      config.resultsRetention,
      clock,
    ),
    logger,
  );

  let closing: Promise<void> | undefined;
  const close = (graceMs: number): Promise<void> => {
    closing ??= (async () => {
      // Invoices waiting for their send time go back to the queue unsent at once: whatever holds them (a
      // Retry-After, a low rate, Redis gone), closing never waits on the pacer. The jobs in hand get the grace.
      pacer?.close();
      const closedInGrace = await closeWithin(worker, blockingClient, graceMs);
      if (!closedInGrace)
        logger.warn(
          { graceMs },
          "grace period over: leaving unfinished invoices to be retried by the next worker",
        );
      // The ledger's connection, ended below, fails what the jobs left still wait for.
      await sweeps.stop();
      apiKey.key.close();
      // Past the grace, requests the service does not answer are dropped, not waited for.
      await submitter.close(!closedInGrace);
      await queue.close();
      endConnection(commands);
      endConnection(connection);
    })();
    return closing;
  };
  return { worker, queue, ledger, pacer, close };
}

/** The budget unreachable is said once per this long (as the worker's own errors are), not four times a second. */
const BUDGET_ERROR_LOG_EVERY_MS = 10_000;
