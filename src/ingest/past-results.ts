import { coerceError } from "../errors/relay-error.js";
import type { PastRecord } from "../ledger/past-record.js";
import type { RecordRestoring } from "../ledger/restore-records.js";
import type { RowRef } from "../ledger/statuses.js";
import { PastResultsUnavailableError } from "./errors/past-results-unavailable-error.js";
import { pastVersionsToRestore } from "./past-versions.js";

/**
 * The results of record kept beyond Redis's retention (PostgreSQL when RESULTS_DATABASE_URL is set).
 * Ingest asks it about the rows of each chunk, so that a re-drop of an invoice that succeeded long ago
 * is a `duplicate`, and a changed version of one is a `conflict`, as they would be within retention.
 */
export interface PastResults {
  /**
   * Those of these keys that succeeded, and the final versions (succeeded or failed) of these
   * external_ids, with their answers; one query for all of them.
   */
  lookUp(asked: {
    readonly keys: readonly string[];
    readonly externalIds: readonly string[];
  }): Promise<PastRecord[]>;
}

/** What ingest needs to deduplicate beyond Redis's retention. */
export interface BeyondRetention {
  /** The results of record (PostgreSQL). */
  readonly results: PastResults;
  /** The ledger's verbs that find and restore forgotten keys. */
  readonly ledger: RecordRestoring;
}

/**
 * Before a chunk of a batch is registered: its keys and external_ids are looked up in the results of
 * record, one query for the chunk, and the versions that decide its rows (pastVersionsToRestore) are
 * restored into the ledger (with this batch) where it has no record of them, so that registering decides
 * them as within the retention. Keys the ledger still knows keep their record, and an external_id it
 * still indexes keeps its entry (restore.lua): asking Redis first which keys it lacks cost more than the
 * query. Returns how many were restored.
 */
export async function restorePastResults(
  { results, ledger }: BeyondRetention,
  where: { readonly batchId: string; readonly file: string },
  rows: readonly RowRef[],
): Promise<number> {
  if (rows.length === 0) return 0;
  let found: PastRecord[];
  try {
    found = await results.lookUp({
      keys: rows.map((row) => row.key),
      externalIds: rows.map((row) => row.externalId),
    });
  } catch (error) {
    throw new PastResultsUnavailableError(where.file, coerceError(error).message, { cause: error });
  }
  const restored = pastVersionsToRestore(rows, found);
  return restored.length === 0 ? 0 : ledger.restoreRecords(where.batchId, restored);
}
