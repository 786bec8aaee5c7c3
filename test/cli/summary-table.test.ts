import { describe, expect, it } from "vitest";
import { hasProblems, summaryTable } from "../../src/cli/summary-table.js";
import type { BatchMeta } from "../../src/ledger/batch-store.js";
import { segment } from "../support/file-names.js";

function reported(counts: Record<string, number>): BatchMeta {
  return {
    id: "20261121T020000Z-3fa9c1",
    file: segment("invoices.csv"),
    format: "csv",
    path: "/drop/archive/x",
    state: "reported",
    created_at: 0,
    report_csv: "/drop/reports/invoices.csv.20261121T020000Z-3fa9c1.results.csv",
    counts: JSON.stringify(counts),
  };
}

describe("the end-of-run summary", () => {
  it("when a written report still counts rows pending, then the table shows a pending column and the run is not reported as all succeeded", () => {
    const batch = reported({ succeeded: 50, pending: 50 });
    expect(hasProblems([batch])).toBe(true);
    const [header, line] = summaryTable([batch]).split("\n");
    expect(header?.split(/\s+/)).toContain("pending");
    const cells = line?.split(/\s+/) ?? [];
    expect(cells[(header?.split(/\s+/) ?? []).indexOf("pending")]).toBe("50");
  });

  it("when no row is pending, then there is no pending column and all succeeded is no problem", () => {
    const batch = reported({ succeeded: 3 });
    expect(hasProblems([batch])).toBe(false);
    expect(summaryTable([batch]).split("\n")[0]).not.toMatch(/pending/);
  });

  it("when a file's name holds a line break or a bidi control, then the table shows it escaped and quoted, one line per file", () => {
    const batch = { ...reported({ succeeded: 1 }), file: segment("fake\nline\u202Ecsv.csv") };
    const table = summaryTable([batch]);
    expect(table.split("\n")).toHaveLength(2);
    expect(table).toContain('"fake\\nline\\u202ecsv.csv"');
    expect(table).not.toContain("\u202E");
  });
});
