import type { Queue } from "bullmq";
import type { KeyNamespace } from "../invoice/key.js";
import type { Logger } from "../log/logger.js";
import { enqueueInvoices, unfinishedJobs, type EnqueueItem } from "../queue/invoice-queue.js";
import type { InvoiceJobData } from "../queue/job-data.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";
import { ensureJob } from "../queue/requeued-jobs.js";
import type { Ledger } from "../ledger/ledger.js";
import type { RowDecision, RowRef } from "../ledger/statuses.js";
import type { ClaimedFile } from "./drop-folder.js";
import { findFileError, readInvoiceFileBatches } from "./read-invoice-file.js";
import { readWithin } from "./file-system-waits.js";
import { shownName } from "../names/shown-text.js";
import type { FileFormat } from "./read-invoice-file.js";
import type { SourceProfile } from "./profiles/source-profile.js";
import { IngestInterruptedError } from "./errors/ingest-interrupted-error.js";
import { restorePastResults, type BeyondRetention } from "./past-results.js";
import type { UnreadableFileError } from "./unreadable-file-error.js";
import { WorkWindow } from "./work-window.js";
import { rowLines } from "./raw-item.js";
import { IngestWindow, type WindowSettings } from "./ingest-window.js";
import { firstNames } from "./listed-names.js";
import type { RegistrationTurn } from "./registration-order.js";

export interface IngestDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<InvoiceJobData>;
  readonly namespace: KeyNamespace;
  readonly logger: Logger;
  /** Rows registered and enqueued per round trip. */
  readonly chunkSize?: number;
  /** Aborted (SIGTERM, SIGINT): ingest stops between two chunks with IngestInterruptedError. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The results of record beyond Redis's retention (RESULTS_DATABASE_URL): keys Redis no longer knows
   * that succeeded there come out `duplicate`, as within retention. Absent: Redis alone decides.
   */
  readonly beyondRetention?: BeyondRetention | undefined;
  /** With tracing on: each invoice's trace begins as its job is added (docs/operations.md, "Traces"). */
  readonly tracing?: InvoiceTracing | undefined;
  /**
   * INGEST_WINDOW: each chunk waits until its jobs keep the queue within the window (ingest-window.ts).
   * Absent: the whole file is enqueued as fast as it is read.
   */
  readonly window?: WindowSettings | undefined;
}

export interface RowCounts {
  rows: number;
  valid: number;
  rejected: number;
  duplicateInFile: number;
  conflictInFile: number;
}

export type IngestResult =
  | {
      readonly kind: "ingested";
      readonly counts: RowCounts;
      readonly enqueued: number;
      readonly unknownFields: readonly string[];
    }
  | { readonly kind: "unreadable"; readonly error: UnreadableFileError };

/** Decisions after which this batch makes sure a job exists for the key (a no-op if it already does). */
const ENQUEUE: ReadonlySet<RowDecision["kind"]> = new Set(["new", "join", "queued", "retrying"]);

/**
 * Rows per ledger registration and per `addBulk`. Redis runs each as one uninterrupted block (a Lua
 * script; a MULTI of adds), so a submission worker sharing that Redis waits behind it: 1000-row chunks
 * held its requests up for tens of milliseconds at a time, and 250 measured 7% more invoices/s end to
 * end (docs/benchmarks.md).
 */
export const INGEST_CHUNK_ROWS = 250;
/**
 * Chunks under way at once. Each is a round trip to register and another to add, so with one at a
 * time small chunks left Redis idle between them; four keep it busy (ingest +25%, docs/benchmarks.md).
 * A crash with several under way is safe: a re-run registers each row once and re-adds what is queued.
 */
export const INGEST_CHUNKS_IN_FLIGHT = 4;

/**
 * Ingests one claimed file. A first, cheap pass proves the file usable as a whole (UTF-8, CSV header,
 * JSON syntax to the end) so a truncated or corrupt file is never half sent; the second pass registers
 * each valid row with the ledger and enqueues what needs sending, in chunks, one chunk's Redis
 * work overlapping the reading of the next; with a window, a chunk first waits until the queue has room
 * for it, so the file is read once at the workers' pace. Re-running it for the same batch (after a
 * crash) registers and enqueues nothing twice, and takes up where the window was.
 */
export async function ingestFile(
  deps: IngestDeps,
  file: ClaimedFile,
  /**
   * How the batch reads its file: the profile recorded with it (profile-snapshot.ts) and its format;
   * with files ingested side by side, its turn to register (registration-order.ts).
   */
  {
    profile,
    format,
    turn,
    bytes,
  }: {
    readonly profile: SourceProfile | undefined;
    readonly format: FileFormat;
    readonly turn?: RegistrationTurn | undefined;
    /** The claimed bytes, when the claim read them (claimedBytes): not read from the disk again. */
    readonly bytes?: Uint8Array | undefined;
  },
): Promise<IngestResult> {
  // Only the bytes claimed are read: a writer still appending is not read into this batch.
  const unusable = await findFileError(file.path, {
    displayName: file.name,
    format,
    length: file.size,
    bytes,
    profile,
  });
  if (unusable !== undefined) return { kind: "unreadable", error: unusable };

  const counts: RowCounts = { rows: 0, valid: 0, rejected: 0, duplicateInFile: 0, conflictInFile: 0 };
  let unknownFields: readonly string[] = [];
  const chunkSize = deps.chunkSize ?? INGEST_CHUNK_ROWS;
  let rows: RowRef[] = [];
  let jobs: EnqueueItem[] = [];
  let enqueued = 0;
  const chunks = new WorkWindow(INGEST_CHUNKS_IN_FLIGHT);
  const window =
    deps.window === undefined
      ? undefined
      : new IngestWindow(deps.window, () => unfinishedJobs(deps.queue), {
          file: file.name,
          logger: deps.logger,
        });
  // Chunks register in file order, each after the one before (which the ledger's registered_line
  // relies on), the first after the files claimed before this one, while their look-ups and adds
  // overlap; one that fails stops every later one.
  let registered: Promise<unknown> = turn?.before ?? Promise.resolve();
  /** Registers and enqueues a chunk; answers how many jobs it may have added. */
  const flush = async (chunkRows: readonly RowRef[], chunkJobs: readonly EnqueueItem[]): Promise<number> => {
    // Waits while PostgreSQL does not answer; throws before anything of the chunk is registered when
    // the results of record refuse, or the wait is given up.
    const restored =
      deps.beyondRetention === undefined
        ? undefined
        : restorePastResults(
            deps.beyondRetention,
            { batchId: file.batchId, file: file.name },
            chunkRows,
            deps,
          );
    const registering = Promise.all([registered, restored]).then(() =>
      deps.ledger.registerRows(file.batchId, chunkRows),
    );
    registered = registering;
    const decisions = await registering;
    const wanted = chunkJobs.filter((_, i) => ENQUEUE.has(decisions[i]?.kind ?? "new"));
    await enqueueInvoices(deps.queue, wanted, deps.tracing);
    // A key failed earlier was put back to queued: its old job may still be there, finished or even
    // held by the worker that recorded the failure, and adding under its id then does nothing.
    let requeued = 0;
    for (const [i, job] of chunkJobs.entries())
      if (decisions[i]?.kind === "requeue" && (await ensureJob(deps, job.key, job.data)) === "added")
        requeued++;
    enqueued += wanted.length + requeued;
    return wanted.length + requeued;
  };
  const send = async (): Promise<void> => {
    const [chunkRows, chunkJobs] = [rows, jobs];
    rows = [];
    jobs = [];
    if (window === undefined) {
      await chunks.start(() => flush(chunkRows, chunkJobs));
      return;
    }
    try {
      await window.take(chunkRows.length);
    } catch (error) {
      await chunks.settle(); // the chunks under way are registered before the file is left
      throw error;
    }
    await chunks.start(async () => {
      let added: number | undefined;
      try {
        added = await flush(chunkRows, chunkJobs);
        return added;
      } finally {
        window.done(chunkRows.length, added);
      }
    });
  };

  try {
    // Each read of the claimed file is on the pass's signal: a hung share ends it at the deadline.
    const reads = readInvoiceFileBatches(file.path, {
      namespace: deps.namespace,
      displayName: file.name,
      format,
      length: file.size,
      bytes,
      profile,
    });
    for await (const batch of readWithin(
      `the drop folder's file ${shownName(file.name)}, read`,
      deps.signal,
      reads,
      // As between two chunks: the file stays claimed, and the next pass resumes it.
      () => new IngestInterruptedError(file.name),
    )) {
      for (const item of batch) {
        if (item.kind === "file-error") {
          await chunks.settle();
          return { kind: "unreadable", error: item.error };
        }
        if (item.kind === "unknown-fields") {
          unknownFields = item.names;
          continue;
        }
        counts.rows += item.kind === "rejected" ? rowLines(item) : 1;
        if (item.kind === "rejected") counts.rejected += rowLines(item);
        else if (item.kind === "duplicate") counts.duplicateInFile++;
        else if (item.kind === "conflict") counts.conflictInFile++;
        else {
          counts.valid++;
          rows.push({ line: item.line, key: item.key, externalId: item.invoice.external_id });
          jobs.push({ key: item.key, data: { invoice: item.invoice, batch: file.batchId, line: item.line } });
          if (rows.length >= chunkSize) {
            // Stopping between chunks is safe: a re-run registers each row once and re-adds what is queued.
            if (deps.signal?.aborted === true) {
              await chunks.settle();
              throw new IngestInterruptedError(file.name);
            }
            await send();
          }
        }
      }
    }
    await send();
  } finally {
    // Every chunk is started: once the last has registered, or failed to, the next file's turn comes,
    // while this file's adds are still under way.
    const done = () => turn?.done();
    registered.then(done, done);
  }
  await chunks.settle();
  await deps.ledger.finishIngest(file.batchId);
  deps.logger.info({ batch: file.batchId, file: file.name, ...counts, enqueued }, "file ingested");
  if (unknownFields.length > 0) {
    deps.logger.warn(
      {
        batch: file.batchId,
        file: file.name,
        fields: firstNames(unknownFields).names,
        fieldsLeftOut: firstNames(unknownFields).leftOut,
      },
      "unknown fields ignored",
    );
  }
  return { kind: "ingested", counts, enqueued, unknownFields };
}
