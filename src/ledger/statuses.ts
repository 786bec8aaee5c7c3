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
 * - Outside the ledger: the **Verdict** of one HTTP answer (src/submit/classify.ts) and the worker's
 *   **SubmitOutcome** of one attempt (src/submit/submit-invoice.ts) become a KeyStatus here; a report's
 *   **RowStatus** (src/results/report-row.ts) is a KeyStatus or a RowDecision seen from the file.
 */
/** How a dropped file is read; a batch keeps its file's format. */
export const FILE_FORMATS = ["csv", "json", "ndjson"] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

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

export type RowDecision =
  | { readonly kind: "new" | "requeue" | "join" | "duplicate" | KeyStatus }
  | { readonly kind: "conflict"; readonly earlierKey: string };

export type AnswerWritten = "ok" | "already" | "already-succeeded" | "unknown";

export type RequeueResult = "requeued" | "superseded" | "not-failed";
