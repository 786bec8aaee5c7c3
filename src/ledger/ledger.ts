import type { AttemptFacts, AttemptFields, ResultRecord } from "./record.js";
import type { AnswerWritten, KeyStatus, RequeueResult, RowDecision, RowRef } from "./statuses.js";

/**
 * The ledger port: one record per idempotency key, and the batches that wait on keys. Every stage
 * reaches the exactly-once state through these verbs (src/ledger/redis-ledger.ts on Redis).
 */
export interface Ledger {
  /** Ingest: registers rows of a batch (file order) and decides each (see RowDecision). */
  registerRows(batchId: string, rows: readonly RowRef[]): Promise<RowDecision[]>;
  /** Ingest: every row is registered; the batch completes once no key is pending for it. */
  finishIngest(batchId: string): Promise<void>;
  statusOf(key: string): Promise<KeyStatus | undefined>;
  get(key: string): Promise<ResultRecord | undefined>;
  getMany(keys: readonly string[]): Promise<(ResultRecord | undefined)[]>;
  recordSucceeded(key: string, fields: AttemptFields): Promise<AnswerWritten>;
  recordFailed(key: string, fields: AttemptFields): Promise<AnswerWritten>;
  /** The status the key is left in; `unknown` if it has no record (nothing is written then). */
  recordRetrying(key: string, fields: AttemptFields): Promise<KeyStatus | "unknown">;
  /** An attempt answered with a refused API key changes no status; the outbox (when on) still gets it. */
  recordRefusedAttempt(key: string, attempt: AttemptFacts): Promise<void>;
  /** `retry`: failed → queued (its batches wait again), or → superseded. */
  requeueFailed(key: string): Promise<RequeueResult>;
  /** Keys put back to queued whose job is not known to exist yet (src/queue/requeued-jobs.ts). */
  requeuingKeys(): Promise<string[]>;
  /** The key's job exists (or it needs none): it leaves `requeuingKeys`. */
  requeued(key: string): Promise<void>;
  failedKeys(): Promise<string[]>;
  /** The batches that have the key, the first one first ([] if it has no record). */
  batchesOf(key: string): Promise<readonly string[]>;
  /** The idempotency key that carries this external_id now (its newest version), if any. */
  keyOfExternalId(externalId: string): Promise<string | undefined>;
  counts(): Promise<Record<KeyStatus, number>>;
}
