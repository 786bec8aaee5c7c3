import type { BatchMeta, BatchStore } from "../../ledger/batch-store.js";
import type { Passes } from "../../ledger/passes.js";
import type { SecondPoint } from "../../ledger/send-series.js";
import { ROW_STATUSES } from "../../ledger/statuses.js";
import type { DeploymentView } from "../../queue/deployment-view.js";

/** The row statuses a batch page filters by (docs/vendor-files.md, "Batches and reports"), `pending` last. */
export const ROW_FILTERS = [...ROW_STATUSES, "pending"] as const;
export type RowFilter = (typeof ROW_FILTERS)[number];

/** One row of a batch as the console shows it: the report's columns, as text. */
export interface ConsoleRow {
  readonly line: number;
  readonly external_id: string;
  readonly idempotency_key: string;
  readonly status: string;
  readonly http_status: string;
  readonly correlation_id: string;
  readonly error: string;
}

export interface RowsQuery {
  /** Only rows of this status; all when absent. */
  readonly status?: RowFilter | undefined;
  /** Rows after this line (the cursor); 0 for the first page. */
  readonly after: number;
  readonly limit: number;
}

export interface RowsPage {
  readonly rows: readonly ConsoleRow[];
  /** The cursor of the next page (the last row's line), absent on the last page. */
  readonly next?: number | undefined;
  /** Where the rows were read: the batch's report, or its file joined with the ledger (not reported yet). */
  readonly source: "report" | "file";
}

/** Reads one page of a batch's rows without holding the batch in memory (src/results/row-pages.ts). */
export interface BatchRowsPort {
  page(batch: BatchMeta, query: RowsQuery): Promise<RowsPage>;
}

/** What "retry this batch's failed rows" did. */
export interface RetryBatchOutcome {
  readonly requeued: number;
  readonly busy: number;
  readonly superseded: number;
  readonly noDocument: number;
}

/**
 * Why the deployment refuses writing commands now (its outbox is on and this process has no
 * RESULTS_DATABASE_URL: src/ledger/outbox-detach.ts), or undefined when it does not. Asked at every
 * request, so a `db detach` meanwhile is seen at once.
 */
export type WritesRefusedPort = () => Promise<string | undefined>;

/** Re-enqueues the batch's failed rows with their keys (src/use-cases/retry-failed.ts). */
export type RetryBatchPort = (batchId: string) => Promise<RetryBatchOutcome>;

/** The batches the console lists and opens (src/ledger/batch-store.ts). */
export type BatchesPort = Pick<BatchStore, "get" | "newest" | "count">;

/**
 * How the deployment is doing (src/queue/deployment-view.ts): the reading the queue page shows, the same
 * `status` and /metrics make.
 */
export interface DeploymentPort {
  /** The deployment now; RedisNotAnsweringError when Redis does not answer in time. */
  read(): Promise<DeploymentView>;
  /** Releases what the readings hold (a queue handle); called when the server closes. */
  close(): Promise<void>;
}

/** The passes (src/ledger/passes.ts) and the fleet's answers per second over one (send-series.ts). */
export interface PassesPort extends Pick<Passes, "get" | "newest" | "count"> {
  series(fromMs: number, toMs: number): Promise<SecondPoint[]>;
}
