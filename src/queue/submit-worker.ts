import { DelayedError, MetricsTime, UnrecoverableError, Worker, type Job, type Queue } from "bullmq";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";
import { backoffDelay, type BackoffPolicy } from "../submit/backoff.js";
import { RequestHeldBackError } from "../submit/errors/request-held-back-error.js";
import { RetryableSubmitError } from "../submit/errors/retryable-submit-error.js";
import { FlowControl } from "../submit/flow-control.js";
import { withPacing, type SendPacer } from "../capacity/index.js";
import { TimeInHand } from "./time-in-hand.js";
import { RequestSlots, withRequestSlots } from "../submit/request-slots.js";
import { submitInvoice, type SubmitDeps, type SubmitOutcome } from "../submit/submit-invoice.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";
import { INVOICE_QUEUE } from "./invoice-queue.js";
import { invoiceJobDataSchema, type InvoiceJobData } from "./job-data.js";

export interface SubmitWorkerOptions {
  readonly connection: RedisClient;
  readonly prefix: string;
  /** The invoice queue, for queue-wide rate limits (cool-downs, a refused key). */
  readonly queue: Queue<InvoiceJobData>;
  readonly deps: SubmitDeps;
  readonly logger: Logger;
  readonly maxConcurrency: number;
  /** Attempts of a job enqueued without its own `attempts` (every invoice job has them). */
  readonly maxAttempts: number;
  /** SUBMIT_RATE_PER_SEC for BullMQ's fixed limiter; used only without `pacer`. */
  readonly ratePerSec: number;
  /**
   * The fleet's send budget (SUBMIT_RATE_ADAPTIVE): every request waits for its send time, and the
   * invoices taken follow the learned rate × latency.
   */
  readonly pacer?: SendPacer | undefined;
  readonly backoff: BackoffPolicy;
  readonly lockDurationMs: number;
  readonly flow?: {
    readonly outageThreshold: number;
    readonly coolDownBaseMs: number;
    readonly coolDownCapMs: number;
  };
  /** Called when the service refuses the API key; the queue is paused by then. */
  readonly onApiKeyRefused: (httpStatus: number, detail: string) => Promise<void>;
  /** Called after every outcome (progress, metrics). */
  readonly onOutcome?: (key: string, outcome: SubmitOutcome) => void;
  /** With tracing on: each attempt is a span of the invoice's trace (docs/operations.md, "Traces"). */
  readonly tracing?: InvoiceTracing | undefined;
}

/** The outcomes after which an attempt's span says it did not succeed (its `error.type` is the outcome). */
const UNSUCCESSFUL: ReadonlySet<SubmitOutcome["kind"]> = new Set(["failed", "retry", "api-key-refused"]);
/** The outcomes after which the invoice is not sent again (a failed one may be, by `retry`). */
const DONE: ReadonlySet<SubmitOutcome["kind"]> = new Set(["succeeded", "skipped"]);

/** How long a refused key holds this worker back before it looks at the (paused) queue again. */
const KEY_REFUSED_HOLD_MS = 1000;
const ERROR_LOG_EVERY_MS = 10_000;
/** An invoice refused for capacity without a Retry-After waits at least this long (ms). */
const THROTTLED_LEAST_WAIT_MS = 1;
/**
 * Invoices taken per request slot. Besides its request, an invoice spends time on Redis round trips
 * (the status read, recording the answer, BullMQ's completion) during which it needs no slot; holding
 * twice as many invoices as requests keeps the service's window full meanwhile. The service never sees
 * more requests at once than the flow-control window (SUBMIT_CONCURRENCY at full speed).
 */
const INVOICES_PER_REQUEST_SLOT = 2;
/**
 * BullMQ applies `queue.rateLimit` (the outage cool-down, the hold after a refused key) only when the
 * worker has a limiter; with the fleet's budget, or without SUBMIT_RATE_PER_SEC, it gets one that never
 * limits by itself.
 */
const UNLIMITED_PER_SECOND = 1_000_000_000;

/**
 * The submission worker: BullMQ Worker whose job id is the idempotency key. Wires the pure attempt
 * logic to BullMQ's retries, rate limiting and pausing.
 */
export function createSubmitWorker(options: SubmitWorkerOptions): Worker<InvoiceJobData> {
  const { logger, deps } = options;
  const flow = new FlowControl({
    maxConcurrency: options.maxConcurrency,
    outageThreshold: options.flow?.outageThreshold ?? 8,
    coolDownBaseMs: options.flow?.coolDownBaseMs ?? 1000,
    coolDownCapMs: options.flow?.coolDownCapMs ?? 60_000,
  });
  const slots = new RequestSlots(flow.concurrency);
  const { pacer } = options;
  // The send time first, then a slot: a request waiting for its time holds no slot.
  const slotted = withRequestSlots(deps.submitter, slots);
  const attemptDeps: SubmitDeps = { ...deps, submitter: slotted };
  const timeInHand = new TimeInHand();
  /** With a budget, each attempt's request is paced, and its time in hand apart from that wait noted. */
  const pacedAttempt = (): { deps: SubmitDeps; handled: () => void } => {
    if (pacer === undefined) return { deps: attemptDeps, handled: () => undefined };
    const [started, sent] = [Date.now(), { heldMs: 0 }];
    const submitter = withPacing(slotted, pacer, (ticket) => (sent.heldMs = ticket.heldMs));
    return {
      deps: { ...attemptDeps, submitter },
      handled: () => {
        timeInHand.handled(Date.now() - started - sent.heldMs);
      },
    };
  };
  /**
   * Requests in flight follow the flow-control window and, with a budget, what the learned rate needs at
   * the latency seen (rate × latency). The invoices taken, two per request, follow the flow-control
   * window and, with a budget, what the rate needs in hand: rate × the longest an invoice was in hand
   * with its Redis work (src/queue/time-in-hand.ts; the request's latency alone held an unlimited
   * service to two thirds of the relay's speed), so that a night's first seconds, sent at the start
   * rate, take no thousands of invoices whose Redis work delays the sends.
   */
  const invoicesInHand = (): number =>
    (pacer === undefined ? flow.concurrency : pacer.needFor(timeInHand.ms, flow.concurrency)) *
    INVOICES_PER_REQUEST_SLOT;
  const followWindow = (): void => {
    const window = flow.concurrency;
    slots.setLimit(
      pacer === undefined ? window : Math.min(window, pacer.concurrency(options.maxConcurrency)),
    );
    worker.concurrency = invoicesInHand();
  };

  const processor = async (job: Job<InvoiceJobData>, token?: string): Promise<string> => {
    const key = job.id ?? "";
    const parsed = invoiceJobDataSchema.safeParse(job.data);
    if (!parsed.success || key === "") {
      throw new UnrecoverableError(
        `job ${key} has unreadable data: ${parsed.error?.issues[0]?.message ?? "no id"}`,
      );
    }
    const attempt = job.attemptsMade + 1;
    const { batch, line } = parsed.data;
    const sent = parsed.data.sent ?? 0;
    const trace = options.tracing?.attempt({ key, batch, line, sent, traceparent: parsed.data.trace });
    let outcome: SubmitOutcome;
    const paced = pacedAttempt();
    try {
      outcome = await submitInvoice(paced.deps, {
        key,
        invoice: parsed.data.invoice,
        attempt,
        // BullMQ fails the job after the attempts it was enqueued with (the enqueuing process's
        // MAX_ATTEMPTS), so that is when the ledger must say `failed`, whatever this worker's setting.
        maxAttempts: job.opts.attempts ?? options.maxAttempts,
        trace,
      });
    } catch (error) {
      // Not sent (a cool-down or a refused key began while it waited): back to the queue, no attempt spent.
      if (error instanceof RequestHeldBackError) {
        trace?.heldBack();
        throw Worker.RateLimitError();
      }
      trace?.end("error", error instanceof Error ? error.name : "unknown");
      throw error;
    }
    paced.handled();
    trace?.end(outcome.kind, UNSUCCESSFUL.has(outcome.kind) ? outcome.kind : undefined);
    // The invoice is tried again: its next attempt is numbered after every request sent so far.
    if (trace !== undefined && trace.requests > 0 && !DONE.has(outcome.kind))
      await job.updateData({ ...parsed.data, sent: sent + trace.requests }).catch((error: unknown) => {
        logger.debug(
          { err: error, key },
          "the count of requests sent was not kept; traces may repeat a number",
        );
      });
    options.onOutcome?.(key, outcome);
    // The job's child logger is made only when a line is written: the common outcomes log at debug,
    // usually off, and a child per job is an allocation and a serialisation of its bindings.
    const log = () => logger.child({ key, batch, line, attempt });
    switch (outcome.kind) {
      case "skipped":
        if (logger.isLevelEnabled("debug"))
          log().debug({ status: outcome.status }, "already final; not sent");
        return outcome.status;
      case "succeeded":
        flow.onSuccess();
        followWindow();
        if (outcome.transition === "unknown")
          log().warn(
            { correlationId: outcome.correlationId },
            "succeeded, but the ledger has no record of this key (Redis lost data?); its batch is re-ingested with the same keys",
          );
        else if (logger.isLevelEnabled("debug"))
          log().debug({ correlationId: outcome.correlationId }, "succeeded");
        return "succeeded";
      case "failed":
        flow.onFinalFailure();
        log().warn({ error: outcome.detail }, "failed");
        return "failed";
      case "throttled": {
        // "Not now": back to the queue without spending an attempt, and no step towards an outage
        // cool-down. The budget slows the fleet when such answers speak of capacity; this invoice waits
        // its Retry-After in any case (a 429 the budget does not count as capacity holds nobody else).
        if (logger.isLevelEnabled("debug"))
          log().debug({ retryAfterMs: outcome.retryAfterMs }, "refused for capacity; sent again later");
        // Delayed, not handed back as rate-limited: BullMQ stops a worker that hands a job back so for
        // what is left of its limiter's window (up to a second), which after every 429 emptied the fleet.
        const waitMs = Math.min(outcome.retryAfterMs ?? 0, options.backoff.retryAfterCapMs);
        if (token === undefined) throw Worker.RateLimitError();
        await job.moveToDelayed(Date.now() + Math.max(THROTTLED_LEAST_WAIT_MS, waitMs), token);
        throw new DelayedError();
      }
      case "retry": {
        const coolDown = flow.onRetryable();
        followWindow();
        if (coolDown !== undefined) {
          log().warn({ coolDownMs: coolDown }, "sustained outage: cooling down before taking more invoices");
          slots.hold(coolDown);
          await options.queue.rateLimit(coolDown);
        }
        log().info({ error: outcome.detail, retryAfterMs: outcome.retryAfterMs }, "will retry");
        throw new RetryableSubmitError(outcome.detail, outcome.httpStatus, outcome.retryAfterMs);
      }
      case "api-key-refused":
        flow.onApiKeyRefused();
        followWindow();
        slots.hold(KEY_REFUSED_HOLD_MS);
        await options.onApiKeyRefused(outcome.httpStatus, outcome.detail);
        // Back to the queue without spending an attempt; the queue is paused until the key is fixed.
        await options.queue.rateLimit(KEY_REFUSED_HOLD_MS);
        throw Worker.RateLimitError();
    }
  };

  const worker: Worker<InvoiceJobData> = new Worker<InvoiceJobData>(INVOICE_QUEUE, processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: invoicesInHand(),
    // A job whose worker died is picked up again once its lock lapses, and it must never be failed for
    // that: the service dedupes by key, so re-sending after a crash is safe, while failing would need
    // a manual retry. Hence an effectively unlimited stall count.
    lockDuration: options.lockDurationMs,
    stalledInterval: Math.max(1000, Math.floor(options.lockDurationMs / 2)),
    maxStalledCount: 1_000_000,
    limiter: {
      max: pacer === undefined && options.ratePerSec > 0 ? options.ratePerSec : UNLIMITED_PER_SECOND,
      duration: 1000,
    },
    // BullMQ's per-minute completed/failed counts (a week of them), which /metrics exports as
    // bullmq_job_completed_total and bullmq_job_failed_total.
    metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) =>
        backoffDelay(
          options.backoff,
          attemptsMade,
          error instanceof RetryableSubmitError ? error.retryAfterMs : undefined,
        ),
    },
  });
  // While Redis is away every reconnect attempt raises an error; one line per 10 s is enough for an operator.
  let lastErrorLog = 0;
  let suppressed = 0;
  worker.on("error", (error) => {
    const now = Date.now();
    if (now - lastErrorLog < ERROR_LOG_EVERY_MS) {
      suppressed++;
      return;
    }
    logger.error(
      { err: error, suppressedSinceLast: suppressed },
      "worker error (Redis unreachable?); retrying",
    );
    lastErrorLog = now;
    suppressed = 0;
  });
  worker.on("failed", (job, error) => {
    if (job !== undefined && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      logger.error({ key: job.id, err: error }, "job failed unexpectedly; see `invoice-relay retry`");
    }
  });
  return worker;
}
