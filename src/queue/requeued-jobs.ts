import type { Queue } from "bullmq";
import { canonicalInvoiceSchema } from "../invoice/schema.js";
import { enqueueInvoices } from "./invoice-queue.js";
import type { InvoiceJobData } from "./job-data.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ResultRecord } from "../ledger/record.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";

export interface RequeuedJobsDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<InvoiceJobData>;
  /** With tracing on, a job put back begins a new trace for the invoice (docs/operations.md, "Traces"). */
  readonly tracing?: InvoiceTracing | undefined;
}

export type JobState = Awaited<ReturnType<Queue<InvoiceJobData>["getJobState"]>>;

/** No job, or a finished one: only then may the key's job be replaced. */
export function isReplaceable(state: JobState): boolean {
  return state === "unknown" || state === "failed" || state === "completed";
}

/**
 * - `added`: a new job is in place of a finished one (or of none);
 * - `exists`: a job that has not run yet is there, and it will send the key;
 * - `running`: a worker holds the key's job. Finishing it deletes it, so the key stays noted as
 *   requeuing and `resumeRequeues` puts a job in place once it is finished.
 */
export type EnsureResult = "added" | "exists" | "running";

/**
 * Makes sure a key the ledger has just put back to queued (a re-drop of a failed invoice, `retry`) has a
 * job that will send it. `queue.remove` quietly does nothing for a job a worker holds, and adding a job
 * under an id that still exists does nothing either, so the job's state decides.
 */
export async function ensureJob(
  deps: RequeuedJobsDeps,
  key: string,
  data: InvoiceJobData,
  state?: JobState,
): Promise<EnsureResult> {
  const now = state ?? (await deps.queue.getJobState(key));
  if (now === "active") return "running";
  if (!isReplaceable(now)) {
    await deps.ledger.requeued(key);
    return "exists";
  }
  if (now !== "unknown" && (await deps.queue.remove(key)) !== 1) return "running"; // taken meanwhile
  await enqueueInvoices(deps.queue, [{ key, data }], deps.tracing);
  await deps.ledger.requeued(key);
  return "added";
}

export interface ResumeOutcome {
  /** Requeued keys that had no job that will run: now they have one. */
  resumed: number;
  /** Requeued keys whose job is still held by a worker: looked at again next time. */
  running: number;
  /** Keys left queued whose record has no readable document: only a re-drop of their file sends them. */
  readonly noDocument: string[];
}

/**
 * Repairs keys put back to queued whose job never came (a `retry` or an ingest stopped between the two
 * steps) or was still held by a worker that then finished it. Cheap when there is nothing to repair
 * (one SMEMBERS); `run`, `start` and `retry` call it as they go.
 */
export async function resumeRequeues(deps: RequeuedJobsDeps): Promise<ResumeOutcome> {
  const outcome: ResumeOutcome = { resumed: 0, running: 0, noDocument: [] };
  const keys = await deps.ledger.requeuingKeys();
  if (keys.length === 0) return outcome;
  const records = await deps.ledger.getMany(keys);
  for (const [i, key] of keys.entries()) {
    const record = records[i];
    const waiting = record?.status === "queued" || record?.status === "retrying";
    const data = record === undefined ? undefined : jobDataOf(record);
    if (!waiting) {
      await deps.ledger.requeued(key); // final meanwhile (or gone): needs no job
      continue;
    }
    if (data === undefined) {
      outcome.noDocument.push(key);
      await deps.ledger.requeued(key);
      continue;
    }
    const result = await ensureJob(deps, key, data);
    if (result === "added") outcome.resumed++;
    else if (result === "running") outcome.running++;
  }
  return outcome;
}

/** The job to send again, from the canonical document the ledger kept with the failure. */
export function jobDataOf(record: ResultRecord): InvoiceJobData | undefined {
  if (record.document === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(record.document);
  } catch {
    return undefined;
  }
  const invoice = canonicalInvoiceSchema.safeParse(json);
  return invoice.success ? { invoice: invoice.data, batch: record.batch, line: record.line } : undefined;
}
