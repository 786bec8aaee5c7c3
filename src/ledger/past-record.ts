/**
 * A key's final answer as the results of record keep it (PostgreSQL, once Redis's retention has
 * forgotten it): what `restoreRecords` writes back into the ledger so that registering decides a row
 * against it as within the retention: the same invoice `duplicate` after a success, a changed version
 * `conflict` after a success of the earlier one, and a corrected version sent (the failed one
 * `superseded`).
 */
export interface PastRecord {
  readonly key: string;
  readonly externalId: string;
  /** Only final answers are restored; a key PostgreSQL shows in flight is one Redis still holds. */
  readonly status: "succeeded" | "failed";
  readonly httpStatus?: number | undefined;
  readonly correlationId?: string | undefined;
  readonly rulesetVersion?: string | undefined;
  readonly attempts: number;
  /** The first and last attempt's time, ms since the epoch. */
  readonly firstAttemptAt?: number | undefined;
  readonly lastAttemptAt?: number | undefined;
  /** Why the last attempt did not succeed (a failed key). */
  readonly error?: string | undefined;
  /** The service's answer body as the results of record hold it. */
  readonly responseBody?: string | undefined;
}

/**
 * A past record restored for a row of the batch being ingested (its own key's, or an earlier version
 * of its external_id): the batch keeps it for retention; `line` is that row's.
 */
export interface RestoredRecord extends PastRecord {
  readonly line: number;
}
