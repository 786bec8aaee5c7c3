import type { Queue } from "bullmq";
import { invoiceJson, type KeyNamespace } from "../invoice/key.js";
import type { Logger } from "../log/logger.js";
import { enqueueInvoices, type EnqueueItem } from "../queue/invoice-queue.js";
import type { InvoiceJobData } from "../queue/job-data.js";
import type { ResultsStore, RowDecision, RowRef } from "../results/results-store.js";
import type { ClaimedFile } from "./drop-folder.js";
import { readInvoiceFileBatches } from "./read-invoice-file.js";
import type { UnreadableFileError } from "./unreadable-file-error.js";

export interface IngestDeps {
  readonly store: ResultsStore;
  readonly queue: Queue<InvoiceJobData>;
  readonly namespace: KeyNamespace;
  readonly logger: Logger;
  /** Rows registered and enqueued per round trip. */
  readonly chunkSize?: number;
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
const ENQUEUE: ReadonlySet<RowDecision["kind"]> = new Set(["new", "requeue", "join", "queued", "retrying"]);

/**
 * Ingests one claimed file: a first pass reads it all and proves it usable as a whole (UTF-8, JSON
 * syntax, CSV header), so a truncated or corrupt file is never half sent; a second pass registers each
 * valid row with the results store and enqueues what needs sending, in chunks. Re-running it for the
 * same batch (after a crash) registers and enqueues nothing twice.
 */
export async function ingestFile(deps: IngestDeps, file: ClaimedFile): Promise<IngestResult> {
  const counts: RowCounts = { rows: 0, valid: 0, rejected: 0, duplicateInFile: 0, conflictInFile: 0 };
  let unknownFields: readonly string[] = [];
  for await (const batch of readInvoiceFileBatches(file.path, {
    namespace: deps.namespace,
    displayName: file.name,
  }))
    for (const item of batch) {
      if (item.kind === "file-error") return { kind: "unreadable", error: item.error };
      if (item.kind === "unknown-fields") unknownFields = item.names;
      else {
        counts.rows++;
        if (item.kind === "valid") counts.valid++;
        else if (item.kind === "rejected") counts.rejected++;
        else if (item.kind === "duplicate") counts.duplicateInFile++;
        else counts.conflictInFile++;
      }
    }

  const chunkSize = deps.chunkSize ?? 1000;
  let rows: RowRef[] = [];
  let jobs: EnqueueItem[] = [];
  let enqueued = 0;
  const flush = async (): Promise<void> => {
    if (rows.length === 0) return;
    const decisions = await deps.store.registerRows(file.batchId, rows);
    const wanted = jobs.filter((_, i) => ENQUEUE.has(decisions[i]?.kind ?? "new"));
    const requeued = jobs.filter((_, i) => decisions[i]?.kind === "requeue");
    // A key failed earlier may still have a retained failed job under its id; it must make way.
    for (const job of requeued) await deps.queue.remove(job.key);
    await enqueueInvoices(deps.queue, wanted);
    enqueued += wanted.length;
    rows = [];
    jobs = [];
  };
  for await (const batch of readInvoiceFileBatches(file.path, {
    namespace: deps.namespace,
    displayName: file.name,
  }))
    for (const item of batch) {
      if (item.kind === "file-error") return { kind: "unreadable", error: item.error };
      if (item.kind !== "valid") continue;
      const document = invoiceJson(item.invoice);
      rows.push({ line: item.line, key: item.key, externalId: item.invoice.external_id, document });
      jobs.push({ key: item.key, data: { invoice: item.invoice, batch: file.batchId, line: item.line } });
      if (rows.length >= chunkSize) await flush();
    }
  await flush();
  await deps.store.finishIngest(file.batchId);
  deps.logger.info({ batch: file.batchId, file: file.name, ...counts, enqueued }, "file ingested");
  if (unknownFields.length > 0) {
    deps.logger.warn(
      { batch: file.batchId, file: file.name, fields: unknownFields },
      "unknown fields ignored",
    );
  }
  return { kind: "ingested", counts, enqueued, unknownFields };
}
