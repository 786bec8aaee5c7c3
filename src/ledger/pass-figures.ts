import { z } from "zod";
import type { BatchMeta } from "./batch-store.js";
import type { SecondPoint } from "./send-series.js";
import { ROW_STATUSES } from "./statuses.js";

/**
 * What a pass's record says it came to, read from what Redis holds (docs/operations.md, "The night at a
 * glance"): the same whether its process recorded its end or the next process found it ended without a
 * word (src/ledger/passes.ts).
 */

const COUNTED = [...ROW_STATUSES, "pending"] as const;
export type OutcomeCounts = Record<(typeof COUNTED)[number], number>;
const countsSchema = z.object(Object.fromEntries(COUNTED.map((s) => [s, z.number()]))).partial();

function emptyOutcomes(): OutcomeCounts {
  return Object.fromEntries(COUNTED.map((s) => [s, 0])) as OutcomeCounts;
}

/** A batch's rows by status as its last report counted them (all 0 before it has one). Pure. */
export function batchCounts(batch: BatchMeta): OutcomeCounts {
  const counts = emptyOutcomes();
  if (batch.counts === undefined) return counts;
  let raw: unknown;
  try {
    raw = JSON.parse(batch.counts) as unknown;
  } catch {
    return counts;
  }
  const parsed = countsSchema.safeParse(raw);
  if (parsed.success)
    for (const [k, v] of Object.entries(parsed.data)) counts[k as keyof OutcomeCounts] = v ?? 0;
  return counts;
}

/**
 * The invoices of some batches by outcome, those with any: a reported batch's report counts; one not
 * reported yet counts the invoices it still waits for as `pending`. Pure.
 */
export function passOutcomes(batches: readonly BatchMeta[]): Partial<OutcomeCounts> {
  const total = emptyOutcomes();
  for (const batch of batches) {
    if (batch.counts === undefined) {
      total.pending += Math.max(0, batch.pending ?? batch.valid_rows ?? 0);
      continue;
    }
    const counts = batchCounts(batch);
    for (const status of COUNTED) total[status] += counts[status];
  }
  return Object.fromEntries(Object.entries(total).filter(([, n]) => n > 0));
}

/**
 * What the fleet's answers per second over a pass come to: the requests refused for capacity, the
 * answers of its busiest whole second, the learned rate last sampled. Pure.
 */
export function sendingOver(points: readonly SecondPoint[]): {
  readonly refused: number;
  readonly busiestSecond: number;
  readonly learnedRate?: number;
} {
  let refused = 0;
  let busiest = 0;
  let learned: number | undefined;
  for (const p of points) {
    refused += p.refused;
    busiest = Math.max(busiest, p.accepted + p.refused + p.other);
    if (p.learned !== undefined) learned = p.learned;
  }
  return { refused, busiestSecond: busiest, ...(learned === undefined ? {} : { learnedRate: learned }) };
}
