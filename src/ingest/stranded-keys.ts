import type { Queue } from "bullmq";
import type { KeyNamespace } from "../invoice/key.js";
import { readInvoiceFileBatches } from "./read-invoice-file.js";
import { profileOfBatch } from "./profiles/profile-snapshot.js";
import type { SourceProfile } from "./profiles/source-profile.js";
import type { Logger } from "../log/logger.js";
import { unfinishedJobs, type EnqueueItem } from "../queue/invoice-queue.js";
import type { InvoiceJobData } from "../queue/job-data.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import { ensureJob } from "../queue/requeued-jobs.js";
import type { Ledger } from "../ledger/ledger.js";

export interface StrandedDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<InvoiceJobData>;
  readonly namespace: KeyNamespace;
  readonly logger: Logger;
  /** The source profiles: a file is read again with the profile its dropped name matches, as at ingest. */
  readonly profiles?: readonly SourceProfile[] | undefined;
}

const CHUNK = 500;

/**
 * Whether invoices wait in the ledger while the queue holds no job that will run (while it holds any,
 * nothing can be stranded for good): the sign of keys stranded without a job (a job deleted under a key
 * that was put back to queued, jobs lost by Redis while the records stayed). One call to BullMQ; `run`
 * asks it when a pass stops making progress.
 */
export async function mayBeStranded(queue: Queue<InvoiceJobData>, pending: number): Promise<boolean> {
  if (pending <= 0) return false;
  return (await unfinishedJobs(queue)) === 0;
}

/**
 * Gives every key of these batches that is still queued or retrying in the ledger, but has no job that
 * will send it, its job back (ensureJob, as for a requeued key): the file is read again (same rows, same
 * keys) for the documents. A job in BullMQ's failed set (an unexpected error) is left to `retry`. Adding
 * a job for a key in flight is always safe: the job id is the key, and a worker never sends a key the
 * ledger has as final.
 */
export async function repairStranded(deps: StrandedDeps, batches: readonly BatchMeta[]): Promise<number> {
  let repaired = 0;
  for (const batch of batches) {
    let items: EnqueueItem[] = [];
    const flush = async () => {
      repaired += await repairChunk(deps, items);
      items = [];
    };
    for await (const read of readInvoiceFileBatches(batch.path, {
      namespace: deps.namespace,
      displayName: batch.file,
      format: batch.format,
      length: batch.size, // the bytes ingested, as the report reads them
      profile: profileOfBatch(batch),
    }))
      for (const item of read) {
        if (item.kind !== "valid") continue;
        items.push({ key: item.key, data: { invoice: item.invoice, batch: batch.id, line: item.line } });
        if (items.length >= CHUNK) await flush();
      }
    await flush();
  }
  if (repaired > 0)
    deps.logger.warn({ repaired }, "invoices waiting without a job were given their job back");
  return repaired;
}

async function repairChunk(deps: StrandedDeps, items: readonly EnqueueItem[]): Promise<number> {
  const records = await deps.ledger.getMany(items.map((i) => i.key));
  let repaired = 0;
  for (const [i, item] of items.entries()) {
    const status = records[i]?.status;
    if (status !== "queued" && status !== "retrying") continue;
    const state = await deps.queue.getJobState(item.key);
    if (state === "failed") continue; // an unexpected error: `retry` re-drives it
    if ((await ensureJob(deps, item.key, item.data, state)) === "added") repaired++;
  }
  return repaired;
}
