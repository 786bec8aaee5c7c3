import type { BatchMeta } from "../ledger/batch-store.js";
import { ROW_STATUSES } from "../results/report-row.js";
import { batchCounts as countsOf } from "../ledger/pass-figures.js";
import { escapedText, shownName } from "../names/shown-text.js";

export { countsOf };
const COUNTED = [...ROW_STATUSES, "pending"] as const;

/** The end-of-run table: one line per file with its counts and report path; `pending` only if any. */
export function summaryTable(batches: readonly BatchMeta[]): string {
  const columns = batches.some((b) => countsOf(b).pending > 0) ? COUNTED : ROW_STATUSES;
  const header = ["file", "batch", ...columns, "report"];
  const rows = batches.map((b) => {
    const counts = countsOf(b);
    const report =
      b.state === "rejected"
        ? `REJECTED: ${b.file_error ?? ""} (${b.summary_json ?? ""})`
        : b.state === "changed"
          ? "NOT REPORTED: changed after it was claimed (below)"
          : (b.report_csv ?? "(not written)");
    const replaced =
      b.replaced_by === undefined ? "" : `; replaced by ${b.replaced_by}, the whole file taken again`;
    const same =
      b.same_content_as === undefined
        ? ""
        : `; the same bytes as ${shownName(b.same_content_as.file)} (batch ${b.same_content_as.batch})`;
    // A name or an error quoting one never breaks the table's lines nor reorders them.
    return [
      shownName(b.file),
      b.id,
      ...columns.map((s) => String(counts[s])),
      escapedText(`${report}${replaced}${same}`),
    ];
  });
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (i === header.length - 1 ? 0 : (r[i] ?? "").length))),
  );
  const format = (cells: readonly string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 ? c : i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0),
      )
      .join("  ");
  return [format(header), ...rows.map(format)].join("\n");
}

/**
 * Exit 2 when any row was rejected, failed or in conflict, or still pending in a written report (never
 * "every row succeeded"), or a file was rejected as a whole.
 */
export function hasProblems(batches: readonly BatchMeta[]): boolean {
  return batches.some((b) => {
    if (b.state === "rejected") return true;
    const c = countsOf(b);
    return c.rejected + c.failed + c.conflict + c.pending > 0;
  });
}
