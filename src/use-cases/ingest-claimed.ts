import { lstat } from "node:fs/promises";
import { hostname } from "node:os";
import type { Queue } from "bullmq";
import type { KeyNamespace } from "../invoice/key.js";
import type { Logger } from "../log/logger.js";
import type { InvoiceJobData } from "../queue/job-data.js";
import type { BatchStore } from "../ledger/batch-store.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { writeBatchReport } from "../results/batch-report.js";
import type { Ledger } from "../ledger/ledger.js";
import {
  claimedBytes,
  claimedBytesUnlessLink,
  EMPTY_CONTENT,
  findContentChange,
} from "../ingest/claimed-content.js";
import { moveClaimed, type ClaimedFile, type DropFolder } from "../ingest/drop-folder.js";
import { BatchLease } from "../ledger/batch-lease.js";
import { ingestFile, type IngestResult } from "../ingest/ingest-file.js";
import { formatFor, profileFor } from "../ingest/profiles/profile-match.js";
import { profileOfBatch, profileSnapshot } from "../ingest/profiles/profile-snapshot.js";
import type { SourceProfile } from "../ingest/profiles/source-profile.js";
import type { FileChangedError } from "../ingest/errors/file-changed-error.js";
import { UnreadableFileError } from "../ingest/unreadable-file-error.js";
import type { BeyondRetention } from "../ingest/past-results.js";
import type { WindowSettings } from "../ingest/ingest-window.js";
import { ledgerNow, type LedgerClock } from "../ledger/clock.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";
import type { LeftFile } from "../names/file-name.js";
import type { QuietWatch } from "../ingest/drop-scan.js";
import type { RegistrationTurn } from "../ingest/registration-order.js";
import type { ScanReads } from "../ingest/reads-under-way.js";

export interface DropPassDeps {
  readonly folder: DropFolder;
  readonly redis: RedisClient;
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly queue: Queue<InvoiceJobData>;
  readonly namespace: KeyNamespace;
  readonly logger: Logger;
  /** Aborted by a signal: ingest stops between chunks (IngestInterruptedError); the file stays claimed. */
  readonly signal?: AbortSignal | undefined;
  /**
   * A scan of `start`: the read measuring a claimed file is cut (FileSystemUnansweredError) when it has
   * delivered no byte while another scan fell due (ScanReads).
   */
  readonly reads?: ScanReads | undefined;
  /**
   * A fixed clock for the ledger's records and batches, from which RESULTS_RETENTION counts (tests that
   * move days forward; give `ledger` and `batches` the same one); Redis's own when absent
   * (src/ledger/clock.ts). Waiting (settle time, leases, deadlines) is real time.
   */
  readonly now?: LedgerClock | undefined;
  /**
   * The source profiles (loadSourceProfiles, loaded before anything is claimed): each file is read with
   * the first whose glob matches the name it was dropped under, and its batch record names that profile.
   */
  readonly profiles?: readonly SourceProfile[] | undefined;
  /** After each file ingested, with its rows read and rejected (metrics); files unusable as a whole not. */
  readonly onIngested?: ((rows: { readonly read: number; readonly rejected: number }) => void) | undefined;
  /** The results of record (RESULTS_DATABASE_URL), asked about keys Redis's retention has forgotten. */
  readonly beyondRetention?: BeyondRetention | undefined;
  /**
   * Files an SFTP source put in processing/ (remote-pull.ts) with no batch record yet, by batch id:
   * ingested as new, not resumed.
   */
  readonly pulled?: ReadonlyMap<string, PulledFile> | undefined;
  /** With tracing on: each invoice's trace begins as its job is added (docs/operations.md, "Traces"). */
  readonly tracing?: InvoiceTracing | undefined;
  /**
   * INGEST_WINDOW: how far ahead of the workers a file is enqueued (src/ingest/ingest-window.ts);
   * absent, every row is enqueued as soon as it is read.
   */
  readonly window?: WindowSettings | undefined;
  /** Told of each file the pass sees and leaves where it is, with why (the pass's output names them). */
  readonly onLeft?: ((file: LeftFile) => void) | undefined;
  /**
   * When this process saw each drop file change (QuietWatch), kept from scan to scan by a long-running
   * process; a pass of its own without it.
   */
  readonly quiet?: QuietWatch | undefined;
}

/** What the SFTP pull knows of a file it put in processing/. */
export interface PulledFile {
  /** An earlier batch of the same source took the same bytes, under this name or another. */
  readonly sameContentAs?: { readonly batch: string; readonly file: string } | undefined;
}

/** `changed`: a resumed file is no longer what was claimed; it is kept in processing/, never reported. */
export type PassResult =
  IngestResult | { readonly kind: "busy" } | { readonly kind: "changed"; readonly error: FileChangedError };

export interface PassedFile {
  readonly file: ClaimedFile;
  readonly result: PassResult;
}

/**
 * Ingests one claimed file under a lease. A file that cannot be used as a whole goes to rejected/ with
 * its report (a summary naming the problem) written at once. What is claimed is measured once, at the
 * claim (length and sha256, in the batch record); only those bytes are read, and a resumed file that is
 * no longer what was claimed is not ingested further (FileChangedError). With files ingested side by
 * side, `turn` keeps its rows registered after those of the files claimed before it; the turn is passed
 * on however the file ends.
 */
export async function ingestClaimed(
  deps: DropPassDeps,
  file: ClaimedFile,
  { turn, fresh = false }: ClaimedHow = {},
): Promise<PassResult> {
  try {
    return await ingestInTurn(deps, file, turn, fresh);
  } finally {
    turn?.done();
  }
}

/** How a file comes to be ingested. */
export interface ClaimedHow {
  /** Its place in the order files register their rows (registration-order.ts), when several go at once. */
  readonly turn?: RegistrationTurn | undefined;
  /** Claimed just now under a batch id minted for it: its batch has no record yet to read. */
  readonly fresh?: boolean | undefined;
}

async function ingestInTurn(
  deps: DropPassDeps,
  file: ClaimedFile,
  turn: RegistrationTurn | undefined,
  fresh: boolean,
): Promise<PassResult> {
  // A file just claimed is measured through a handle that refuses a link, with no lstat before it.
  const fromClaim = fresh ? await claimedBytesUnlessLink(file.path, deps.signal, deps.reads) : undefined;
  const link = fresh ? fromClaim === undefined : (await lstat(file.path)).isSymbolicLink();
  const known = fresh ? undefined : await deps.batches.get(file.batchId);
  const read =
    known?.size !== undefined && known.sha256 !== undefined
      ? { content: { size: known.size, sha256: known.sha256 } }
      : link
        ? { content: EMPTY_CONTENT } // a link is never followed, not even to measure it
        : (fromClaim ?? (await claimedBytes(file.path, deps.signal, deps.reads)));
  const measured = read.content;
  // A resumed batch keeps the profile it was first read with, whatever SOURCES_FILE says now.
  const profile = known === undefined ? profileFor(deps.profiles, file.name) : profileOfBatch(known);
  const opened = {
    id: file.batchId,
    file: file.name,
    format: known?.format ?? formatFor(file.name, profile),
    profile: profile?.name,
    profileJson: profile === undefined ? undefined : profileSnapshot(profile),
    path: file.path,
    host: hostname(),
    ...measured,
    sameContentAs: deps.pulled?.get(file.batchId)?.sameContentAs,
  };
  // A new record holds what was given; one there already (an id another process minted too) is read.
  const meta = fresh && (await deps.batches.openNew(opened)) ? opened : await deps.batches.open(opened);
  const claimed = { size: meta.size ?? measured.size, sha256: meta.sha256 ?? measured.sha256 };
  const lease = new BatchLease(deps.redis, deps.batches.names.ingestLease(file.batchId));
  if (!(await lease.acquire())) return { kind: "busy" };
  try {
    const change =
      known === undefined || link ? undefined : await findContentChange(file.path, file.name, claimed);
    // Grown only: the claimed bytes are read as ever; the whole file is taken again once it has settled.
    if (change !== undefined && !change.prefixIntact) {
      deps.logger.error(
        { batch: file.batchId, file: file.name, err: change.message },
        "file changed after it was claimed; kept in processing/",
      );
      await deps.batches.markChanged(file.batchId, change.message);
      return { kind: "changed", error: change };
    }
    const result: IngestResult = link
      ? {
          kind: "unreadable",
          error: new UnreadableFileError(
            file.name,
            "is a symbolic link; links are not followed out of the drop folder, copy the file itself",
          ),
        }
      : await ingestFile(
          deps,
          { ...file, size: claimed.size },
          // The bytes measured are those ingested, unless the record holds an earlier measure.
          {
            profile,
            format: meta.format,
            turn,
            bytes: claimed.sha256 === measured.sha256 ? read.bytes : undefined,
          },
        );
    if (result.kind === "unreadable") await rejectFile(deps, file, result.error);
    else {
      await deps.batches.update(file.batchId, {
        state: "ingested",
        rows: result.counts.rows,
        valid_rows: result.counts.valid,
        read_counts: JSON.stringify({
          rejected: result.counts.rejected,
          duplicate: result.counts.duplicateInFile,
          conflict: result.counts.conflictInFile,
        }),
      });
      deps.onIngested?.({ read: result.counts.rows, rejected: result.counts.rejected });
    }
    return result;
  } finally {
    await lease.release();
  }
}

async function rejectFile(deps: DropPassDeps, file: ClaimedFile, error: UnreadableFileError): Promise<void> {
  deps.logger.error({ batch: file.batchId, file: file.name, err: error.message }, "file rejected as a whole");
  const path = await moveClaimed(deps.folder, file, "rejected", deps.signal);
  await deps.batches.update(file.batchId, {
    state: "rejected",
    file_error: error.message,
    path,
    completed_at: await ledgerNow(deps.redis, deps.now),
  });
  const meta = await deps.batches.require(file.batchId);
  const report = await writeBatchReport(
    { ledger: deps.ledger, batches: deps.batches, namespace: deps.namespace, profiles: deps.profiles },
    meta,
    deps.folder,
  );
  await deps.batches.markReported(
    file.batchId,
    {
      report_csv: report.csvPath,
      summary_json: report.summaryPath,
      counts: JSON.stringify(report.summary.counts),
      path,
    },
    "rejected",
  );
}
