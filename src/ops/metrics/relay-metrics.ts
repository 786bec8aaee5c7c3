import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import {
  finalStatusWritten,
  type AttemptObservation,
  type RetryReason,
  type StatusClass,
  type SubmissionHooks,
  type SubmitOutcome,
} from "../../queue/submission-service.js";

/** Every metric of invoice-relay's own starts so (docs/operations.md, "Metrics"). */
export const METRIC_PREFIX = "invoice_relay_";

const STATUS_CLASSES: readonly StatusClass[] = ["2xx", "4xx", "5xx", "network"];
const RETRY_REASONS: readonly RetryReason[] = [
  "throttled",
  "server_error",
  "timeout",
  "network",
  "in_flight",
  "too_early",
];
/** The final statuses a submission worker writes (the ledger's words, src/ledger/statuses.ts). */
const WORKER_FINAL_STATUSES = ["succeeded", "failed"] as const;
/** From a few milliseconds to REQUEST_TIMEOUT_MS's usual range. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The observers ingest calls (DropPassDeps.onIngested, structurally). */
export interface IngestObserver {
  readonly onIngested: (rows: { readonly read: number; readonly rejected: number }) => void;
}

/**
 * The metrics this process counts itself, in one registry per process, with Node's process metrics.
 * Counters start at zero for every label value they can take, so a rate over them is never missing.
 */
export interface RelayMetrics {
  readonly registry: Registry;
  /** For startSubmission (and nightlyPass's deps): counts attempts and the final answers written. */
  readonly submission: Required<Pick<SubmissionHooks, "onAttempt" | "onOutcome" | "onHeld">>;
  readonly ingest: IngestObserver;
}

export function createRelayMetrics(): RelayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  const registers = [registry];
  /** A counter by one label, at zero for every value the label can take. */
  const countedBy = <L extends string>(
    name: string,
    help: string,
    label: L,
    values: readonly string[],
  ): Counter<L> => {
    const counter = new Counter({ name: `${METRIC_PREFIX}${name}`, help, labelNames: [label], registers });
    for (const value of values) {
      const labels: Partial<Record<L, string>> = {};
      labels[label] = value;
      counter.inc(labels, 0);
    }
    return counter;
  };
  const counted = (name: string, help: string): Counter =>
    new Counter({ name: `${METRIC_PREFIX}${name}`, help, registers });
  const finals = countedBy(
    "invoices_final_total",
    "Invoices whose final answer this process wrote to the ledger, by status (succeeded, failed)",
    "status",
    WORKER_FINAL_STATUSES,
  );
  const attempts = countedBy(
    "http_attempts_total",
    "Requests sent to the invoice service, by answer class (2xx, 3xx, 4xx, 5xx, network: no answer)",
    "status_class",
    STATUS_CLASSES,
  );
  const retries = countedBy(
    "http_retries_total",
    "Answers worth another attempt, by reason (throttled, server_error, timeout, network, in_flight, too_early)",
    "reason",
    RETRY_REASONS,
  );
  const duration = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: "Time from sending a request to the invoice service to the end of its answer (or giving up on it)",
    buckets: DURATION_BUCKETS,
    registers,
  });
  const rowsRead = counted("ingest_rows_read_total", "Rows (records) read from ingested files");
  const rowsRejected = counted(
    "ingest_rows_rejected_total",
    "Rows rejected at ingest (invalid records; never sent)",
  );
  const held = counted(
    "send_held_seconds_total",
    "Time requests waited for their send time in the fleet's budget (the learned rate, a Retry-After), summed",
  );

  return {
    registry,
    submission: {
      onAttempt: (attempt: AttemptObservation) => {
        attempts.inc({ status_class: attempt.statusClass });
        if (attempt.retryReason !== undefined) retries.inc({ reason: attempt.retryReason });
        duration.observe(attempt.seconds);
      },
      onHeld: (ms: number) => {
        held.inc(ms / 1000);
      },
      onOutcome: (_key: string, outcome: SubmitOutcome) => {
        const status = finalStatusWritten(outcome);
        if (status !== undefined) finals.inc({ status });
      },
    },
    ingest: {
      onIngested: (rows) => {
        rowsRead.inc(rows.read);
        rowsRejected.inc(rows.rejected);
      },
    },
  };
}
