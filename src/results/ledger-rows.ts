import type { BatchMeta } from "../ledger/batch-store.js";
import { row, type BatchRowsDeps } from "./batch-rows.js";
import type { ReportRow, RowStatus } from "./report-row.js";

/**
 * The report rows of a batch whose file is gone, from what Redis keeps alone: each key the batch sent
 * first, at the line its record names, with its outcome. Rows the batch did not send (rejected, in-file
 * duplicates, keys an earlier batch sent) are named only in the file, so they are not among them.
 */
export async function* ledgerRows(deps: BatchRowsDeps, batch: BatchMeta): AsyncGenerator<ReportRow> {
  const rows: ReportRow[] = [];
  for await (const keys of deps.batches.keysOf(batch.id)) {
    const records = await deps.ledger.getMany(keys);
    for (const record of records) {
      if (record?.batch !== batch.id) continue;
      const status: RowStatus =
        record.status === "succeeded" || record.status === "failed" || record.status === "superseded"
          ? record.status
          : "pending";
      const error = record.status === "succeeded" ? "" : (record.error ?? "");
      rows.push(row(record.line, record.external_id, record.key, status, record, error));
    }
  }
  yield* rows.sort((a, b) => a.line - b.line);
}
