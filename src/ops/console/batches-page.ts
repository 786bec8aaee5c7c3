import type { BatchMeta } from "../../ledger/batch-store.js";
import { html, type SafeHtml } from "./html.js";
import { when } from "./layout.js";
import { ROW_FILTERS } from "./ports.js";
import { isBatchFinished } from "../../ledger/statuses.js";
import { escapedText, shownName } from "../../names/shown-text.js";

/** Row counts of a batch's last report (the `counts` JSON of its record), if it has one. */
export function countsOf(meta: BatchMeta): Partial<Record<string, number>> | undefined {
  return parseCounts(meta.counts);
}

/** Whether the batch waits for the service: ingested, not reported, with rows not final yet. */
export const waitsForService = (meta: BatchMeta): boolean =>
  meta.state === "ingested" && (meta.pending ?? 0) > 0;

function parseCounts(json: string | undefined): Partial<Record<string, number>> | undefined {
  if (json === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const counts: Partial<Record<string, number>> = {};
    for (const [name, value] of Object.entries(parsed)) if (typeof value === "number") counts[name] = value;
    return counts;
  } catch {
    return undefined;
  }
}

/** Rows final out of all rows: a reported batch is done; otherwise what no longer waits for the service. */
export function progressOf(meta: BatchMeta): { final: number; total: number } {
  const total = meta.rows ?? 0;
  if (isBatchFinished(meta.state)) return { final: total, total };
  if (meta.state === "ingesting") return { final: 0, total };
  return { final: Math.max(0, total - (meta.pending ?? 0)), total };
}

export const statusBadge = (status: string): SafeHtml =>
  html`<span class="status status-${status.replace(/[^a-z]/g, "")}">${status}</span>`;

/**
 * `/`: the newest batches, one line each; `held`: why nothing is sent now (src/queue/hold-reason.ts),
 * said beside each batch that waits.
 */
export function batchesPage(metas: readonly BatchMeta[], total: number, held?: string): SafeHtml {
  if (metas.length === 0)
    return html`<p class="notice">
      No batches yet: files dropped into DROP_DIR show up here once a pass claims them.
    </p>`;
  return html`<p class="muted">The ${metas.length} newest of ${total} batch(es).</p>
    <table class="batches">
      <thead>
        <tr>
          <th>File</th>
          <th>Dropped</th>
          <th>State</th>
          <th>Progress</th>
          <th>Rows per status</th>
          <th>Report</th>
        </tr>
      </thead>
      <tbody>
        ${metas.map((meta) => batchLine(meta, held))}
      </tbody>
    </table>`;
}

function batchLine(meta: BatchMeta, held: string | undefined): SafeHtml {
  const { final, total } = progressOf(meta);
  const counts = countsOf(meta);
  const link = `/batches/${encodeURIComponent(meta.id)}`;
  const perStatus =
    counts === undefined
      ? rowsSoFar(meta, link)
      : ROW_FILTERS.filter((s) => (counts[s] ?? 0) > 0).map(
          (s) => html`<a href="${link}?status=${s}">${counts[s] ?? 0} ${s}</a> `,
        );
  return html`<tr>
    <td>
      <a href="${link}">${shownName(meta.file)}</a>
      <div class="muted mono id">${meta.id}</div>
    </td>
    <td>${when(meta.created_at)}</td>
    <td>
      ${statusBadge(meta.state)}${meta.file_error === undefined ? "" : html`<div class="error">${escapedText(meta.file_error)}</div>`}${
        held !== undefined && waitsForService(meta) ? html`<div class="error">waiting: ${held}</div>` : ""
      }${
        meta.replaced_by === undefined
          ? ""
          : html`<div class="muted">
              replaced by
              <a class="mono id" href="/batches/${encodeURIComponent(meta.replaced_by)}">${meta.replaced_by}</a>
            </div>`
      }
    </td>
    <td>
      <progress
        max="${Math.max(total, 1)}"
        value="${total === 0 ? (meta.state === "reported" ? 1 : 0) : final}"
      ></progress>
      <span class="muted">${final}/${total}</span>
    </td>
    <td>${perStatus}</td>
    <td>${reportLinks(meta)}</td>
  </tr>`;
}

/**
 * Every row of a batch not reported yet: those decided when its file was read, by status; those of its
 * sent rows already final (by status only in the report); those still waiting.
 */
function rowsSoFar(meta: BatchMeta, link: string): SafeHtml {
  const read = parseCounts(meta.read_counts);
  const notSent = Math.max(0, (meta.rows ?? 0) - (meta.valid_rows ?? 0));
  const decided =
    read === undefined
      ? // a batch read before its record kept these counts
        notSent > 0
        ? html`<span class="muted">${notSent} not sent (rejected or repeated in the file)</span> `
        : ""
      : ROW_FILTERS.filter((s) => (read[s] ?? 0) > 0).map(
          (s) => html`<a href="${link}?status=${s}">${read[s] ?? 0} ${s}</a> `,
        );
  const waiting = meta.pending ?? 0;
  const sentFinal = Math.max(0, (meta.valid_rows ?? 0) - waiting);
  return html`${decided}${sentFinal > 0 ? html`<span class="muted">${sentFinal} final</span> ` : ""}${
    waiting > 0 ? html`<a href="${link}?status=pending">${waiting} waiting</a>` : ""
  }`;
}

export function reportLinks(meta: BatchMeta): SafeHtml {
  const base = `/batches/${encodeURIComponent(meta.id)}`;
  return html`${meta.report_csv === undefined ? "" : html`<a href="${base}/report.csv">results.csv</a> `}${
    meta.summary_json === undefined ? "" : html`<a href="${base}/summary.json">summary.json</a>`
  }`;
}
