/**
 * Glossary of the ledger: the words every stage uses for where an invoice stands.
 *
 * - **idempotency key** (`key` in code): the UUID derived from an invoice's external_id and content
 *   (src/invoice/key.ts). Sent as the `Idempotency-Key` header; the ledger keeps one record per key.
 *   Not the API key (`apiKey`, the service's bearer secret, never stored) nor a Redis key name (built
 *   only by `LedgerNames`).
 * - **KeyStatus**: where a key stands (the table below). `queued` and `retrying` are in flight;
 *   `succeeded`, `failed` and `superseded` are final until `retry` or a re-drop moves them.
 * - **RowDecision**: what registering a row of a file decided: the key is `new` (this batch enqueues
 *   it), `requeue` (it was failed or superseded: sent again), `join` (already in flight: this batch
 *   waits for it too), `duplicate` (the same invoice already succeeded: not sent again), `conflict`
 *   (another version of the same external_id is in flight or succeeded under `earlierKey`: this one is
 *   not sent), or, for a row registered before a crash, the key's status now.
 * - **AnswerWritten** (`recordSucceeded`/`recordFailed`): `ok` (the record took the answer), `already`
 *   (it had that final status), `already-succeeded` (a success stays; the answer is ignored), `unknown`
 *   (no record: Redis lost it; nothing written).
 * - **RequeueResult** (`retry`): `requeued`, `superseded` (a newer version exists; not sent), `not-failed`.
 * - **BatchState**: where a batch (one dropped file) stands: `ingesting` (rows still being registered),
 *   `ingested` (every row registered; it waits for its keys, or was reopened by `retry` or a re-drop),
 *   `reported` (its report is written), `rejected` (the file could not be used as a whole; its report
 *   says why) or `changed` (the file changed after its claim: kept in processing/, never reported).
 *   A batch is **finished** (`isBatchFinished`) once `reported` or `rejected`.
 * - **RowStatus**: a report row's status: a final KeyStatus (`succeeded`, `failed`, `superseded`) or
 *   what the row's RowDecision made it (`duplicate`, `conflict`), `rejected` for a row that is not a
 *   valid invoice, and `pending` while its key is in flight.
 * - **FileFormat**: how a dropped file is read (`csv`, `json`, `ndjson`); its batch keeps it.
 * - Outside the ledger: the **Verdict** of one HTTP answer (src/submit/classify.ts) and the worker's
 *   **SubmitOutcome** of one attempt (src/submit/submit-invoice.ts) become a KeyStatus here; a report's
 *   RowStatus is a KeyStatus or a RowDecision seen from the file.
 */
export const FILE_FORMATS = ["csv", "json", "ndjson"] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

export const BATCH_STATES = ["ingesting", "ingested", "rejected", "reported", "changed"] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** Whether a batch is finished: its report is written (or the file was rejected as a whole). */
export const isBatchFinished = (state: BatchState): boolean => state === "reported" || state === "rejected";

/** A report row's final statuses, in the order reports and summaries list them; `pending` is not final. */
export const ROW_STATUSES = [
  "succeeded",
  "duplicate",
  "rejected",
  "failed",
  "conflict",
  "superseded",
] as const;
export type RowStatus = (typeof ROW_STATUSES)[number] | "pending";

export const KEY_STATUSES = ["queued", "retrying", "succeeded", "failed", "superseded"] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/**
 * Every move of a key's status, and what makes it; the scripts in src/ledger/lua are the only writers
 * (docs/ledger.md shows this table). `null`: the key has no record yet.
 */
export const TRANSITIONS: readonly {
  readonly from: KeyStatus | null;
  readonly to: KeyStatus;
  readonly by: string;
}[] = [
  { from: null, to: "queued", by: "a row is registered (register.lua)" },
  { from: "queued", to: "retrying", by: "an answer worth another attempt (answers.lua)" },
  { from: "retrying", to: "retrying", by: "another answer worth another attempt (answers.lua)" },
  { from: "queued", to: "succeeded", by: "a 2xx answer (answers.lua)" },
  { from: "retrying", to: "succeeded", by: "a 2xx answer (answers.lua)" },
  { from: "queued", to: "failed", by: "a refusal, or the last attempt used (answers.lua)" },
  { from: "retrying", to: "failed", by: "a refusal, or the last attempt used (answers.lua)" },
  {
    from: "failed",
    to: "queued",
    by: "`retry` (requeue.lua) or a re-drop of the same invoice (register.lua)",
  },
  { from: "failed", to: "superseded", by: "a newer version of its external_id is registered" },
  {
    from: "superseded",
    to: "queued",
    by: "a re-drop of this version once the newer one failed (register.lua)",
  },
  { from: "failed", to: "succeeded", by: "a late 2xx answer of an earlier attempt (answers.lua)" },
  { from: "superseded", to: "succeeded", by: "a late 2xx answer of an earlier attempt (answers.lua)" },
];

export const isFinal = (status: KeyStatus | undefined): boolean =>
  status === "succeeded" || status === "failed" || status === "superseded";

/** A row of a batch that waits on (or is decided against) an idempotency key. */
export interface RowRef {
  readonly line: number;
  readonly key: string;
  readonly externalId: string;
}

/** What registering a row decided, besides the key's status now for a row registered before a crash. */
export const DECISIONS = ["new", "requeue", "join", "duplicate", "conflict"] as const;

export type RowDecision =
  | { readonly kind: Exclude<(typeof DECISIONS)[number], "conflict"> | KeyStatus }
  | { readonly kind: "conflict"; readonly earlierKey: string };

/** What a report row's decision can be, as the outbox and the results of record keep it. */
export const ROW_DECISIONS = [...DECISIONS, "rejected", ...KEY_STATUSES] as const;

export type AnswerWritten = "ok" | "already" | "already-succeeded" | "unknown";

export type RequeueResult = "requeued" | "superseded" | "not-failed";
