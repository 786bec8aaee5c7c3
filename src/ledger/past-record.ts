/**
 * A key's final success as the results of record keep it (PostgreSQL, once Redis's retention has
 * forgotten it): what `restoreRecords` writes back into the ledger so that a re-drop of the same
 * invoice is decided `duplicate` with its original answer, as within retention.
 */
export interface PastRecord {
  readonly key: string;
  readonly httpStatus?: number | undefined;
  readonly correlationId?: string | undefined;
  readonly rulesetVersion?: string | undefined;
  readonly attempts: number;
  /** The first and last attempt's time, ms since the epoch. */
  readonly firstAttemptAt?: number | undefined;
  readonly lastAttemptAt?: number | undefined;
  /** The service's answer body as the results of record hold it. */
  readonly responseBody?: string | undefined;
}

/** A past record restored for a row of the batch being ingested: the batch keeps it for retention. */
export interface RestoredRecord extends PastRecord {
  readonly externalId: string;
  readonly line: number;
}
