import type { JobsOptions, Queue } from "bullmq";
import type { RedisClient } from "../ledger/redis-client.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";
import { INVOICE_JOB_NAME, type InvoiceJobData } from "./job-data.js";
import { RelayQueue } from "./relay-queue.js";

export const INVOICE_QUEUE = "invoices";

/**
 * Completed jobs go at once: the ledger is the record, and a retained job id would block
 * re-enqueueing the key after `retry`. A few failed jobs (unexpected errors only) are kept to inspect.
 */
export function invoiceJobOptions(maxAttempts: number): JobsOptions {
  return {
    attempts: maxAttempts,
    backoff: { type: "relay" },
    removeOnComplete: true,
    removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
  };
}

/**
 * BullMQ's event stream keeps this many recent job events (10,000 by default, about 1.1 MB): nothing in
 * invoice-relay reads it (the ledger is the record), so it only serves an operator's dashboard.
 */
const EVENTS_KEPT = 1000;

export function createInvoiceQueue(
  connection: RedisClient,
  prefix: string,
  maxAttempts: number,
): Queue<InvoiceJobData> {
  return new RelayQueue<InvoiceJobData>(INVOICE_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: invoiceJobOptions(maxAttempts),
    streams: { events: { maxLen: EVENTS_KEPT } },
  });
}

/** Job states in which a job will still run: what the queue holds of invoices not yet final. */
export const UNFINISHED_STATES = [
  "waiting",
  "active",
  "delayed",
  "prioritized",
  "waiting-children",
  "paused",
] as const;

/** How many jobs will still run, whatever process added them: one script run in Redis. */
export async function unfinishedJobs(queue: Queue<InvoiceJobData>): Promise<number> {
  const counts = await queue.getJobCounts(...UNFINISHED_STATES);
  return UNFINISHED_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
}

export interface EnqueueItem {
  readonly key: string;
  readonly data: InvoiceJobData;
}

const ADD_BULK_CHUNK = 1000;

/**
 * Adds jobs whose id is the idempotency key. Adding a key that is already waiting, delayed or active is
 * a no-op in BullMQ, which is what makes a re-run of ingest safe. With `tracing`, each job's trace
 * begins here and its data carries the traceparent (a job already there keeps its own).
 */
export async function enqueueInvoices(
  queue: Queue<InvoiceJobData>,
  items: readonly EnqueueItem[],
  tracing?: InvoiceTracing,
): Promise<void> {
  for (let i = 0; i < items.length; i += ADD_BULK_CHUNK) {
    const chunk = items.slice(i, i + ADD_BULK_CHUNK);
    const traced = tracing?.enqueue(
      chunk.map((item) => ({ key: item.key, batch: item.data.batch, line: item.data.line })),
    );
    const jobs = chunk.map((item, j) => {
      const trace = traced?.traceparents[j];
      return {
        name: INVOICE_JOB_NAME,
        data: trace === undefined ? item.data : { ...item.data, trace },
        opts: { jobId: item.key },
      };
    });
    try {
      // One job (a file of one invoice) is one script run; addBulk would wrap it in a MULTI.
      const [one] = jobs;
      if (jobs.length === 1 && one !== undefined) await queue.add(one.name, one.data, one.opts);
      else await queue.addBulk(jobs);
    } catch (error) {
      traced?.end({ errorType: error instanceof Error ? error.name : "unknown" });
      throw error;
    }
    traced?.end();
  }
}
