import type { Job, Queue } from "bullmq";
import { invoiceJobDataSchema, type InvoiceJobData } from "../queue/job-data.js";
import type { BatchStore } from "../ledger/batch-store.js";
import type { Ledger } from "../ledger/ledger.js";
import { ensureJob, isReplaceable, jobDataOf, resumeRequeues } from "../queue/requeued-jobs.js";
import type { ResultRecord } from "../ledger/record.js";
import { isFinal } from "../ledger/statuses.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";

export interface RetryDeps {
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly queue: Queue<InvoiceJobData>;
  /** With tracing on, an invoice sent again begins a new trace (docs/operations.md, "Traces"). */
  readonly tracing?: InvoiceTracing | undefined;
}

/** Keys left alone, how many, with a few examples to name in the output. */
export interface Skipped {
  count: number;
  readonly examples: string[];
}

export interface RetryOutcome {
  /** Failed keys put back in the queue with their original key and document. */
  requeued: number;
  /** Keys an interrupted earlier `retry` had requeued without their job: their job now exists. */
  resumed: number;
  /** Jobs of BullMQ's own failed set (unexpected errors) sent back to waiting. */
  redriven: number;
  /**
   * Failed keys not sent again because a newer version of the same external_id was sent since under
   * another key: they are now `superseded`, and sending the outdated one would be a second invoice.
   */
  readonly superseded: Skipped;
  /** A job for the key is waiting or running: left alone (the worker skips it; retry again later). */
  readonly busy: Skipped;
  /** The record has no readable invoice document: only dropping the file again can re-send it. */
  readonly noDocument: Skipped;
  /** A failed job whose data does not parse: retrying it would fail the same way. */
  readonly unreadableJobs: Skipped;
  /** Batches that wait for re-enqueued keys again; their reports are rewritten when those are final. */
  readonly batches: Set<string>;
}

const CHUNK = 200;
const FAILED_PAGE = 500;
const EXAMPLES = 5;

/**
 * `retry`: re-enqueues invoices that ended `failed` (all, or those of one batch) with their original
 * keys, then re-drives jobs stopped by unexpected errors. Rejected rows never had a key, so they are
 * never touched. Safe to run twice or from two processes: the ledger's REQUEUE is atomic and answers
 * false for a key that is no longer failed. A `retry` stopped between requeueing a key and adding its
 * job is finished by the next one (whatever batch it names): the ledger notes such keys until the job
 * exists.
 */
export async function retryFailed(deps: RetryDeps, batchId?: string): Promise<RetryOutcome> {
  const outcome: RetryOutcome = {
    requeued: 0,
    resumed: 0,
    redriven: 0,
    superseded: { count: 0, examples: [] },
    busy: { count: 0, examples: [] },
    noDocument: { count: 0, examples: [] },
    unreadableJobs: { count: 0, examples: [] },
    batches: new Set(),
  };
  await resumeInterrupted(deps, outcome);
  const failed = await deps.ledger.failedKeys();
  for (let i = 0; i < failed.length; i += CHUNK) {
    const chunk = failed.slice(i, i + CHUNK);
    const records = await deps.ledger.getMany(chunk);
    for (const [j, key] of chunk.entries()) {
      const record = records[j];
      if (batchId === undefined || record?.batches.includes(batchId) === true)
        await requeueKey(deps, key, record, outcome);
    }
  }
  await redriveFailedJobs(deps, batchId, outcome);
  return outcome;
}

async function requeueKey(
  deps: RetryDeps,
  key: string,
  record: ResultRecord | undefined,
  outcome: RetryOutcome,
): Promise<void> {
  if (record?.status !== "failed") return; // settled meanwhile (a late success, another retry)
  const data = jobDataOf(record);
  if (data === undefined) {
    skip(outcome.noDocument, key);
    return;
  }
  // Only a finished job (or none) may be replaced. A waiting or running one would see the key failed and
  // skip it; requeueing under it could leave the key queued with no job once it completes.
  const state = await deps.queue.getJobState(key);
  if (!isReplaceable(state)) {
    skip(outcome.busy, key);
    return;
  }
  const requeue = await deps.ledger.requeueFailed(key);
  if (requeue === "superseded") skip(outcome.superseded, key);
  if (requeue !== "requeued") return;
  // REQUEUE made the key's batches wait again (a reported one back to ingested); they are named.
  for (const id of record.batches) outcome.batches.add(id);
  await ensureJob(deps, key, data, state);
  outcome.requeued++;
}

/** Finishes what an interrupted `retry` or re-drop left: requeued keys whose job never came. */
async function resumeInterrupted(deps: RetryDeps, outcome: RetryOutcome): Promise<void> {
  const resumed = await resumeRequeues(deps);
  outcome.resumed += resumed.resumed;
  for (const key of resumed.noDocument) skip(outcome.noDocument, key);
}

async function redriveFailedJobs(deps: RetryDeps, batchId: string | undefined, outcome: RetryOutcome) {
  // Listed before any is retried: retrying takes a job out of the set, which would shift the pages.
  const jobs: Job<InvoiceJobData>[] = [];
  for (let start = 0; ; start += FAILED_PAGE) {
    const page = await deps.queue.getFailed(start, start + FAILED_PAGE - 1);
    jobs.push(...page);
    if (page.length < FAILED_PAGE) break;
  }
  for (const job of jobs) {
    const key = job.id;
    if (key === undefined) continue;
    const data = invoiceJobDataSchema.safeParse(job.data);
    if (batchId !== undefined && !(await belongsTo(deps, key, data.data, batchId))) continue;
    // A final key needs no job: the worker would skip it (failed keys were handled above).
    const status = await deps.ledger.statusOf(key);
    if (isFinal(status)) continue;
    if (!data.success) {
      skip(outcome.unreadableJobs, key);
      continue;
    }
    try {
      await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
      outcome.redriven++;
    } catch {
      // moved on meanwhile (another retry, or removed by retention): nothing to re-drive
    }
  }
}

async function belongsTo(
  deps: RetryDeps,
  key: string,
  data: InvoiceJobData | undefined,
  batchId: string,
): Promise<boolean> {
  if ((await deps.ledger.batchesOf(key)).includes(batchId)) return true;
  return data?.batch === batchId;
}

function skip(skipped: Skipped, key: string): void {
  skipped.count++;
  if (skipped.examples.length < EXAMPLES) skipped.examples.push(key);
}
