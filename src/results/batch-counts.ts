import { z } from "zod";
import type { BatchMeta } from "../ledger/batch-store.js";
import { ROW_STATUSES } from "../ledger/statuses.js";
import { emptyCounts, type StatusCounts } from "./report-row.js";

const COUNTED = [...ROW_STATUSES, "pending"] as const;
const countsSchema = z.object(Object.fromEntries(COUNTED.map((s) => [s, z.number()]))).partial();

/** A batch's rows by status as its last report counted them (all 0 before it has one). */
export function batchCounts(batch: BatchMeta): StatusCounts {
  const counts = emptyCounts();
  if (batch.counts === undefined) return counts;
  let raw: unknown;
  try {
    raw = JSON.parse(batch.counts) as unknown;
  } catch {
    return counts;
  }
  const parsed = countsSchema.safeParse(raw);
  if (parsed.success)
    for (const [k, v] of Object.entries(parsed.data)) counts[k as keyof StatusCounts] = v ?? 0;
  return counts;
}

/**
 * The invoices of some batches by outcome, for a pass's record: a reported batch's report counts; one
 * not reported yet counts the invoices it still waits for as `pending`.
 */
export function outcomesOf(batches: readonly BatchMeta[]): StatusCounts {
  const total = emptyCounts();
  for (const batch of batches) {
    if (batch.counts === undefined) {
      total.pending += Math.max(0, batch.pending ?? batch.valid_rows ?? 0);
      continue;
    }
    const counts = batchCounts(batch);
    for (const status of COUNTED) total[status] += counts[status];
  }
  return total;
}
