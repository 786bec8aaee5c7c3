import type { BatchMeta } from "../ledger/batch-store.js";
import { batchRows, type BatchRowsDeps } from "./batch-rows.js";

export interface RowError {
  readonly line: number;
  readonly external_id: string | null;
  readonly error: string;
}

const PROBLEMS = new Set(["rejected", "failed", "conflict"]);

/**
 * The first `max` rows of a reported batch that were rejected, failed or in conflict, as its report
 * shows them: the file is read again only until that many are found.
 */
export async function firstErrors(deps: BatchRowsDeps, batch: BatchMeta, max: number): Promise<RowError[]> {
  const out: RowError[] = [];
  if (max <= 0 || batch.state !== "reported") return out;
  for await (const row of batchRows(deps, batch)) {
    if (!PROBLEMS.has(row.status)) continue;
    out.push({
      line: row.line,
      external_id: row.external_id === "" ? null : row.external_id,
      error: row.error === "" ? row.status : row.error,
    });
    if (out.length >= max) break;
  }
  return out;
}
