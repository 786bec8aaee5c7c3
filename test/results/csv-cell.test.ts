import { describe, expect, it } from "vitest";
import { exportCsvLine, type ExportRow } from "../../src/results/export-records.js";
import { csvLine, type ReportRow } from "../../src/results/report-row.js";

const REPORT_ROW: ReportRow = {
  line: 2,
  external_id: "ACME-1",
  idempotency_key: "0b9e3a58-3c61-5f0e-8f1e-2d0a5b7c9e14",
  status: "failed",
  http_status: "422",
  correlation_id: "req-1",
  ruleset_version: "2026-10-16.1",
  attempts: "1",
  error: "HTTP 422: refused",
};

const EXPORT_ROW: ExportRow = {
  idempotency_key: "0b9e3a58-3c61-5f0e-8f1e-2d0a5b7c9e14",
  external_id: "ACME-1",
  status: "failed",
  http_status: 422,
  correlation_id: "req-1",
  ruleset_version: "2026-10-16.1",
  attempts: 1,
  batch: "20261120T010000Z-abcdef",
  line: 2,
  first_attempt_at: "2026-11-20T01:00:00.000Z",
  last_attempt_at: "2026-11-20T01:00:01.000Z",
  error: "HTTP 422: refused",
  trace_id: null,
};

describe("CSV cells of reports and exports", () => {
  it("when the service's text in error, correlation_id or ruleset_version starts with = + - @ tab or CR, then the report cell is quoted text with a leading quote", () => {
    const line = csvLine({
      ...REPORT_ROW,
      correlation_id: "@SUM(1+1)",
      ruleset_version: "+1",
      error: "=cmd|' /C calc'!A0",
    });
    expect(line).toBe(
      `2,ACME-1,${REPORT_ROW.idempotency_key},failed,422,"'@SUM(1+1)","'+1",1,"'=cmd|' /C calc'!A0"\r\n`,
    );
    expect(csvLine({ ...REPORT_ROW, correlation_id: "\tx", error: "\r-2+3" })).toBe(
      `2,ACME-1,${REPORT_ROW.idempotency_key},failed,422,"'\tx",2026-10-16.1,1,"'\r-2+3"\r\n`,
    );
  });

  it("when an exported record's text starts with a formula character, then its cell is neutralised and its numbers are left alone", () => {
    const line = exportCsvLine(
      { ...EXPORT_ROW, external_id: '=HYPERLINK("http://x","y")', error: "-1", response_body: "@x" },
      true,
    );
    expect(line).toBe(
      `${EXPORT_ROW.idempotency_key},"'=HYPERLINK(""http://x"",""y"")",failed,422,req-1,2026-10-16.1,1,` +
        `20261120T010000Z-abcdef,2,2026-11-20T01:00:00.000Z,2026-11-20T01:00:01.000Z,"'-1",,"'@x"\r\n`,
    );
  });

  it("when no text starts with a formula character, then cells are written as before: RFC 4180 quoting only where needed", () => {
    expect(csvLine({ ...REPORT_ROW, external_id: "ACME, Ltd", error: 'said "no"; 1+1=2' })).toBe(
      `2,"ACME, Ltd",${REPORT_ROW.idempotency_key},failed,422,req-1,2026-10-16.1,1,"said ""no""; 1+1=2"\r\n`,
    );
    expect(csvLine({ ...REPORT_ROW, correlation_id: "", error: " =not at the start" })).toBe(
      `2,ACME-1,${REPORT_ROW.idempotency_key},failed,422,,2026-10-16.1,1, =not at the start\r\n`,
    );
  });
});
