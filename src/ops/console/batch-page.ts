import type { BatchMeta } from "../../ledger/batch-store.js";
import { countsOf, progressOf, reportLinks, statusBadge, waitsForService } from "./batches-page.js";
import { html, query, type SafeHtml } from "./html.js";
import { when, type Viewer } from "./layout.js";
import { ROW_FILTERS, type RowFilter, type RowsPage } from "./ports.js";
import { escapedText, shownName } from "../../names/shown-text.js";

export interface BatchView {
  readonly meta: BatchMeta;
  readonly page: RowsPage;
  readonly status?: RowFilter | undefined;
  readonly after: number;
  readonly viewer: Viewer;
  /** What a retry just did, shown once after its redirect. */
  readonly notice?: string | undefined;
  /** Why nothing is sent now (src/queue/hold-reason.ts), said when the batch waits. */
  readonly held?: string | undefined;
}

/** `/batches/:id`: the batch, its rows of one status, a page at a time. */
export function batchPage(view: BatchView): SafeHtml {
  const { meta, page } = view;
  const base = `/batches/${encodeURIComponent(meta.id)}`;
  const { final, total } = progressOf(meta);
  const filters = [undefined, ...ROW_FILTERS].map((status) => {
    const current = status === view.status;
    return html`<a href="${base}${query({ status })}" class="${current ? "current" : ""}"
      >${status ?? "all"}</a
    >`;
  });
  return html`${view.notice === undefined ? "" : html`<p class="notice good">${view.notice}</p>`}
    <dl class="record">
      <dt>File</dt>
      <dd>${shownName(meta.file)}</dd>
      <dt>Batch</dt>
      <dd class="mono id">${meta.id}</dd>
      <dt>State</dt>
      <dd>${statusBadge(meta.state)} <span class="muted">${final}/${total} rows final</span></dd>
      ${
        view.held === undefined || !waitsForService(meta)
          ? ""
          : html`<dt>Waiting</dt>
              <dd class="error">${view.held}</dd>`
      }
      ${
        meta.file_error === undefined
          ? ""
          : html`<dt>Problem</dt>
              <dd class="error">${escapedText(meta.file_error)}</dd>`
      }
      ${
        meta.replaced_by === undefined
          ? ""
          : html`<dt>Replaced by</dt>
              <dd>
                <a class="mono id" href="/batches/${encodeURIComponent(meta.replaced_by)}">${meta.replaced_by}</a>
                <span class="muted">the file grew or changed after its claim and was taken again, whole</span>
              </dd>`
      }
      <dt>Dropped</dt>
      <dd>${when(meta.created_at)}</dd>
      ${
        meta.reported_at === undefined
          ? ""
          : html`<dt>Reported</dt>
              <dd>${when(meta.reported_at)}</dd>`
      }
      ${
        meta.profile === undefined
          ? ""
          : html`<dt>Source profile</dt>
              <dd>${meta.profile}</dd>`
      }
      <dt>Report</dt>
      <dd>${reportLinks(meta)}</dd>
    </dl>
    ${retryControl(meta, view.viewer, base)}
    <h2>Rows</h2>
    <p class="filters">${filters}</p>
    ${rowsTable(page)}
    <p class="pager">
      ${view.after > 0 ? html`<a href="${base}${query({ status: view.status })}">« first page</a> ` : ""}${
        page.next === undefined
          ? ""
          : html`<a href="${base}${query({ status: view.status, after: page.next })}">next page »</a>`
      }
    </p>
    <p class="muted">
      ${page.source === "report" ? "Read from the batch's report." : "Read from the file and the ledger (no final report yet)."}
    </p>`;
}

function rowsTable(page: RowsPage): SafeHtml {
  if (page.rows.length === 0) return html`<p class="notice">No rows here.</p>`;
  return html`<table class="rows">
    <thead>
      <tr>
        <th class="num">Line</th>
        <th>external_id</th>
        <th>Status</th>
        <th class="num">HTTP</th>
        <th>Idempotency key</th>
        <th>Correlation id</th>
        <th>Error</th>
      </tr>
    </thead>
    <tbody>
      ${page.rows.map(
        (row) =>
          html`<tr>
            <td class="num">${row.line}</td>
            <td class="mono">
              ${row.external_id === "" ? "" : html`<a href="/search${query({ q: row.external_id })}">${row.external_id}</a>`}
            </td>
            <td>${statusBadge(row.status)}</td>
            <td class="num">${row.http_status}</td>
            <td class="mono id">${row.idempotency_key}</td>
            <td class="mono">${row.correlation_id}</td>
            <td class="error">${row.error}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function retryControl(meta: BatchMeta, viewer: Viewer, base: string): SafeHtml {
  const failed = countsOf(meta)?.["failed"] ?? 0;
  if (!viewer.writable || failed === 0 || viewer.refusal !== undefined) return html``;
  if (!viewer.signedIn)
    return html`<p class="muted">
      <a href="/login">Sign in</a> to retry this batch's ${failed} failed row(s).
    </p>`;
  return html`<form method="post" action="${base}/retry" class="retry">
    <input type="hidden" name="csrf" value="${viewer.csrf ?? ""}" />
    <button type="submit" class="primary">Retry ${failed} failed row(s)</button>
    <span class="muted">re-enqueued with their original keys; a running worker sends them</span>
  </form>`;
}
