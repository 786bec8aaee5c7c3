import { setTimeout as sleep } from "node:timers/promises";
import { RelayError, coerceError } from "../errors/relay-error.js";
import type { PastRecord } from "../ledger/past-record.js";
import type { Logger } from "../log/logger.js";
import type { RecordRestoring } from "../ledger/restore-records.js";
import type { RowRef } from "../ledger/statuses.js";
import { PastResultsUnavailableError } from "./errors/past-results-unavailable-error.js";
import { pastVersionsToRestore } from "./past-versions.js";
import { endedBy } from "../lifecycle/pass-signal.js";
import { withinSignal } from "../lifecycle/within-signal.js";
import { waitingFor } from "../lifecycle/waits.js";

/**
 * The look-up could not reach PostgreSQL (the port's adapter, src/records, raises DATABASE_UNREACHABLE
 * for it): worth waiting for, unlike a refused query or an outdated schema.
 */
const waitable = (error: unknown): error is RelayError =>
  error instanceof RelayError && error.code === "DATABASE_UNREACHABLE";

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
  /** Where PostgreSQL is, for the operator: RESULTS_DATABASE_URL's host only (databaseHost). */
  readonly host: string;
  /**
   * The pass's one signal (passSignal: its deadline or a signal to stop): a look-up, and the wait between
   * two, end with it, even one PostgreSQL never answers; absent, it is waited for until it answers.
   */
  readonly until?: AbortSignal | undefined;
  /** Waits between two tries of a look-up PostgreSQL did not answer: the first, doubled up to the cap. */
  readonly retryMs?: { readonly first: number; readonly cap: number } | undefined;
}

const RETRY_MS = { first: 1000, cap: 30_000 };

/**
 * Before a chunk of a batch is registered: its keys and external_ids are looked up in the results of
 * record, one query for the chunk, and the versions that decide its rows (pastVersionsToRestore) are
 * restored into the ledger (with this batch) where it has no record of them, so that registering decides
 * them as within the retention. Keys the ledger still knows keep their record, and an external_id it
 * still indexes keeps its entry (restore.lua): asking Redis first which keys it lacks cost more than the
 * query. Returns how many were restored.
 */
export async function restorePastResults(
  beyond: BeyondRetention,
  where: { readonly batchId: string; readonly file: string },
  rows: readonly RowRef[],
  waiting: { readonly logger: Logger; readonly signal?: AbortSignal | undefined },
): Promise<number> {
  if (rows.length === 0) return 0;
  const found = await lookUpPatiently(beyond, where.file, rows, waiting);
  const restored = pastVersionsToRestore(rows, found);
  return restored.length === 0 ? 0 : beyond.ledger.restoreRecords(where.batchId, restored);
}

/**
 * The chunk's look-up, asked again with backoff while PostgreSQL does not answer: the chunk (and so every
 * later one, registered in file order) waits, and no row of it is registered or sent unchecked, while
 * invoices already queued go on being sent by the workers (docs/reliability.md, "PostgreSQL down during
 * ingest"). Throws PastResultsUnavailableError when PostgreSQL refuses the query itself (an old schema),
 * or once the deadline passed or the signal stopped the wait.
 */
async function lookUpPatiently(
  { results, host, until, retryMs = RETRY_MS }: BeyondRetention,
  file: string,
  rows: readonly RowRef[],
  { logger, signal: ingestSignal }: { readonly logger: Logger; readonly signal?: AbortSignal | undefined },
): Promise<PastRecord[]> {
  const signals = [ingestSignal, until].filter((s) => s !== undefined);
  const signal = signals.length === 0 ? undefined : AbortSignal.any(signals);
  const asked = { keys: rows.map((row) => row.key), externalIds: rows.map((row) => row.externalId) };
  const what = `PostgreSQL at ${host} (RESULTS_DATABASE_URL), asked about the invoices of ${file}`;
  let failed: unknown;
  for (let tries = 0; ; tries++) {
    if (signal?.aborted === true) throw unavailable(file, failed ?? notAnswered(host, signal));
    try {
      const found = await waitingFor(what, () =>
        withinSignal(results.lookUp(asked), signal, (s) => notAnswered(host, s)),
      );
      if (tries > 0) logger.info({ file, database: host }, "PostgreSQL answers again: the ingest goes on");
      return found;
    } catch (error) {
      if (!waitable(error)) throw unavailable(file, error);
      failed = error;
      const waitMs = Math.min(retryMs.cap, retryMs.first * 2 ** Math.min(tries, 10));
      logger.warn(
        // the driver's reason only: the error's own text quotes the URL, which may hold more than the host
        { file, database: host, retryInMs: waitMs, reason: coerceError(error.cause).message },
        `waiting for PostgreSQL at ${host} (RESULTS_DATABASE_URL) to check the invoices of ${file} ` +
          "against the results of record before any is sent; invoices already queued go on being sent",
      );
      await sleep(waitMs, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
    }
  }
}

function unavailable(file: string, error: unknown): PastResultsUnavailableError {
  return new PastResultsUnavailableError(file, coerceError(error).message, { cause: error });
}

/** Why a look-up the pass's signal ended had no answer: PostgreSQL did not answer, by what end. */
function notAnswered(host: string, signal: AbortSignal): Error {
  return new Error(`PostgreSQL at ${host} did not answer before ${endedBy(signal)}`);
}
