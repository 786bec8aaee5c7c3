import type { AttemptFields, KeyStatus, ResultRecord } from "./record.js";

/** A row of a batch that waits on (or is decided against) an idempotency key. */
export interface RowRef {
  readonly line: number;
  readonly key: string;
  readonly externalId: string;
}

/**
 * What ingest learns when it registers a row:
 * - `new` / `requeue`: this batch must enqueue the key;
 * - `join`, `queued`, `retrying`: the key is in flight already (enqueueing again is harmless);
 * - `succeeded`, `failed`: registered earlier by this batch and already final;
 * - `duplicate`: the same invoice already succeeded; not sent again;
 * - `conflict`: the same external_id with other content is in flight or succeeded under `earlierKey`.
 */
export type RowDecision =
  | {
      readonly kind:
        "new" | "requeue" | "join" | "queued" | "retrying" | "succeeded" | "failed" | "duplicate";
    }
  | { readonly kind: "conflict"; readonly earlierKey: string };

/** `unknown`: the key has no record (Redis lost it); nothing was written. */
export type FinalTransition = "ok" | "already" | "already-succeeded" | "unknown";

/** `superseded`: a newer version of the invoice was sent since under another key; it is not requeued. */
export type RequeueResult = "requeued" | "superseded" | "not-failed";

/** The results store port: one record per idempotency key, batches that wait on keys. */
export interface ResultsStore {
  registerRows(batchId: string, rows: readonly RowRef[]): Promise<RowDecision[]>;
  finishIngest(batchId: string): Promise<void>;
  statusOf(key: string): Promise<KeyStatus | undefined>;
  get(key: string): Promise<ResultRecord | undefined>;
  getMany(keys: readonly string[]): Promise<(ResultRecord | undefined)[]>;
  recordSucceeded(key: string, fields: AttemptFields): Promise<FinalTransition>;
  recordFailed(key: string, fields: AttemptFields): Promise<FinalTransition>;
  /** The status the key is left in; `unknown` if it has no record (nothing is written then). */
  recordRetrying(key: string, fields: AttemptFields): Promise<KeyStatus | "unknown">;
  /** `retry`: failed → queued (its batches wait again), or → superseded. */
  requeueFailed(key: string): Promise<RequeueResult>;
  /** Keys put back to queued whose job is not known to exist yet (src/queue/requeued-jobs.ts). */
  requeuingKeys(): Promise<string[]>;
  /** The key's job exists (or it needs none): it leaves `requeuingKeys`. */
  requeued(key: string): Promise<void>;
  failedKeys(): Promise<string[]>;
  counts(): Promise<Record<KeyStatus, number>>;
}
