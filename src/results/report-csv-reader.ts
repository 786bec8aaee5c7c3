import { open } from "node:fs/promises";
import { REPORT_HEADER, ROW_STATUSES, type ReportRow, type RowStatus } from "./report-row.js";

/** One data row of a report CSV and the byte offset where the next one starts. */
export interface OffsetRow {
  readonly row: ReportRow;
  readonly offset: number;
  /** The offset where this row starts. */
  readonly start: number;
}

const CHUNK_BYTES = 64 * 1024;
const STATUSES: ReadonlySet<string> = new Set([...ROW_STATUSES, "pending"]);

/**
 * The rows of a report CSV from byte `from` (a row's start; 0: the header is skipped), one at a time,
 * reading 64 KiB at a time: a report of a million rows is never held in memory.
 */
export async function* reportRowsFrom(path: string, from: number): AsyncGenerator<OffsetRow> {
  const file = await open(path, "r");
  try {
    let pending = Buffer.alloc(0);
    let pendingStart = from;
    let position = from;
    let header = from === 0;
    for (;;) {
      const chunk = Buffer.alloc(CHUNK_BYTES);
      const { bytesRead } = await file.read(chunk, 0, CHUNK_BYTES, position);
      position += bytesRead;
      const data = Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
      let start = 0;
      let quoted = false;
      for (let i = 0; i < data.length; i++) {
        const byte = data[i];
        if (byte === 0x22) quoted = !quoted;
        else if (byte === 0x0a && !quoted) {
          const text = data.subarray(start, i).toString("utf8");
          const rowStart = pendingStart + start;
          start = i + 1;
          if (header) {
            header = false;
            continue;
          }
          const row = parseRow(text);
          if (row !== undefined) yield { row, start: rowStart, offset: pendingStart + start };
        }
      }
      pending = data.subarray(start);
      pendingStart += start;
      if (bytesRead === 0) return;
    }
  } finally {
    await file.close();
  }
}

/** One CSV record (RFC 4180, as src/results/csv-cell.ts writes it) as a report row; undefined if not one. */
export function parseRow(text: string): ReportRow | undefined {
  const cells = splitCells(text.endsWith("\r") ? text.slice(0, -1) : text);
  if (cells.length !== REPORT_HEADER.length) return undefined;
  const [line, external_id, key, status, http, cid, ruleset, attempts, error] = cells;
  if (status === undefined || !STATUSES.has(status)) return undefined;
  return {
    line: Number(line),
    external_id: external_id ?? "",
    idempotency_key: key ?? "",
    status: status as RowStatus,
    http_status: http ?? "",
    correlation_id: cid ?? "",
    ruleset_version: ruleset ?? "",
    attempts: attempts ?? "",
    error: error ?? "",
  };
}

/** The cells of one record; a quoted cell that csvCell guarded against formulas loses its `'` again. */
function splitCells(text: string): string[] {
  const cells: string[] = [];
  let at = 0;
  for (;;) {
    if (text[at] === '"') {
      let value = "";
      let i = at + 1;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote === -1) return [];
        value += text.slice(i, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      cells.push(/^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value);
      if (i >= text.length) return cells;
      at = i + 1; // past the comma
    } else {
      const comma = text.indexOf(",", at);
      if (comma === -1) {
        cells.push(text.slice(at));
        return cells;
      }
      cells.push(text.slice(at, comma));
      at = comma + 1;
    }
  }
}
