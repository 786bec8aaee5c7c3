import { stat } from "node:fs/promises";
import type { BatchMeta } from "../ledger/batch-store.js";
import { batchRows, type BatchRowsDeps } from "./batch-rows.js";
import { reportRowsFrom } from "./report-csv-reader.js";
import type { ReportRow, RowStatus } from "./report-row.js";

export interface RowPageQuery {
  readonly status?: RowStatus | undefined;
  readonly after: number;
  readonly limit: number;
}

export interface RowPage {
  readonly rows: readonly ReportRow[];
  readonly next?: number | undefined;
  readonly source: "report" | "file";
}

/** A checkpoint every this many rows of a report: where a page after a given line starts reading. */
const CHECKPOINT_ROWS = 1000;
/** Reports whose checkpoints are kept (least recently used go first): about 16 bytes per 1,000 rows each. */
const INDEXED_REPORTS = 32;

interface Checkpoints {
  readonly version: string;
  /** lines[i] is the line of the row starting at offsets[i]; both ascending. */
  readonly lines: number[];
  readonly offsets: number[];
}

/**
 * Pages of a batch's rows, `after` a line: a reported batch's rows come from its report CSV, read from
 * the nearest checkpoint of an in-memory index of byte offsets (bounded); a batch not reported yet (or
 * reopened by a retry) is read again from its file and joined with the ledger, as `results --batch` does.
 */
export class RowPages {
  readonly #index = new Map<string, Checkpoints>();

  constructor(private readonly deps: BatchRowsDeps) {}

  async page(batch: BatchMeta, query: RowPageQuery): Promise<RowPage> {
    if (batch.state === "reported" && batch.report_csv !== undefined) {
      return { ...(await this.#fromReport(batch.report_csv, query)), source: "report" };
    }
    if (batch.state === "rejected" || batch.state === "changed") return { rows: [], source: "file" };
    return { ...(await collect(batchRows(this.deps, batch), query)), source: "file" };
  }

  async #fromReport(path: string, query: RowPageQuery): Promise<Omit<RowPage, "source">> {
    const info = await stat(path);
    const points = this.#checkpoints(path, `${info.size}:${info.mtimeMs}`);
    // The last checkpoint at or before the cursor: every row after the cursor lies beyond it.
    let at = 0;
    for (let i = points.lines.length - 1; i >= 0; i--)
      if ((points.lines[i] ?? 0) <= query.after) {
        at = i;
        break;
      }
    const from = points.offsets[at] ?? 0;
    let counted = points.offsets.length === 0 ? 0 : at * CHECKPOINT_ROWS;
    const rows = async function* (): AsyncGenerator<ReportRow> {
      for await (const { row, start } of reportRowsFrom(path, from)) {
        if (counted % CHECKPOINT_ROWS === 0 && counted / CHECKPOINT_ROWS === points.lines.length) {
          points.lines.push(row.line);
          points.offsets.push(start);
        }
        counted++;
        yield row;
      }
    };
    return collect(rows(), query);
  }

  #checkpoints(path: string, version: string): Checkpoints {
    const known = this.#index.get(path);
    this.#index.delete(path);
    const points = known?.version === version ? known : { version, lines: [], offsets: [] };
    this.#index.set(path, points);
    while (this.#index.size > INDEXED_REPORTS) {
      const oldest = this.#index.keys().next().value;
      if (oldest === undefined) break;
      this.#index.delete(oldest);
    }
    return points;
  }
}

/** The first `limit` rows after the cursor with the status asked for, and whether more follow. */
async function collect(
  source: AsyncGenerator<ReportRow>,
  query: RowPageQuery,
): Promise<Omit<RowPage, "source">> {
  const rows: ReportRow[] = [];
  for await (const row of source) {
    if (row.line <= query.after) continue;
    if (query.status !== undefined && row.status !== query.status) continue;
    if (rows.length === query.limit) {
      await source.return(undefined);
      return { rows, next: rows[rows.length - 1]?.line };
    }
    rows.push(row);
  }
  return { rows };
}
