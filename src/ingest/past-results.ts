import { coerceError } from "../errors/relay-error.js";
import type { PastRecord, RestoredRecord } from "../ledger/past-record.js";
import type { RecordRestoring } from "../ledger/restore-records.js";
import type { RowRef } from "../ledger/statuses.js";
import { PastResultsUnavailableError } from "./errors/past-results-unavailable-error.js";

/**
 * The results of record kept beyond Redis's retention (PostgreSQL when RESULTS_DATABASE_URL is set).
 * Ingest asks it about the keys Redis no longer knows, so a re-drop of an invoice that succeeded long
 * ago is a `duplicate`, as it would be within retention.
 */
export interface PastResults {
  /** Those of these keys that succeeded, with their answer; one query for all of them. */
  succeeded(keys: readonly string[]): Promise<PastRecord[]>;
}

/** What ingest needs to deduplicate beyond Redis's retention. */
export interface BeyondRetention {
  /** The results of record (PostgreSQL). */
  readonly results: PastResults;
  /** The ledger's verbs that find and restore forgotten keys. */
  readonly ledger: RecordRestoring;
}

/**
 * Before a chunk of a batch is registered: its keys are looked up in the results of record, one query
 * for the chunk, and those that succeeded are restored into the ledger (with this batch) where it has
 * no record of them, so that registering decides them `duplicate`. Keys the ledger still knows keep
 * their record (restore.lua skips them): asking Redis first which keys it lacks cost more than the
 * query. Keys that failed or were superseded are not restored: like a re-drop within retention, which
 * requeues them, they are sent again. Returns how many were restored.
 */
export async function restorePastResults(
  { results, ledger }: BeyondRetention,
  where: { readonly batchId: string; readonly file: string },
  rows: readonly RowRef[],
): Promise<number> {
  if (rows.length === 0) return 0;
  let found: PastRecord[];
  try {
    found = await results.succeeded(rows.map((row) => row.key));
  } catch (error) {
    throw new PastResultsUnavailableError(where.file, coerceError(error).message, { cause: error });
  }
  if (found.length === 0) return 0;
  const byKey = new Map(rows.map((row) => [row.key, row]));
  const restored: RestoredRecord[] = [];
  for (const record of found) {
    const row = byKey.get(record.key);
    if (row !== undefined) restored.push({ ...record, externalId: row.externalId, line: row.line });
  }
  return ledger.restoreRecords(where.batchId, restored);
}
