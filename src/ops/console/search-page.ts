import type { ResultRecord } from "../../ledger/record.js";
import { statusBadge } from "./batches-page.js";
import { html, type SafeHtml } from "./html.js";
import { when } from "./layout.js";

/** `/search?q=`: the records found by external_id or idempotency key. */
export function searchPage(q: string, records: readonly ResultRecord[]): SafeHtml {
  const form = html`<form method="get" action="/search" class="search-page">
    <input type="search" name="q" value="${q}" aria-label="external_id or idempotency key" />
    <button type="submit">Search</button>
  </form>`;
  if (q === "")
    return html`${form}
      <p class="muted">Give an external_id or an idempotency key (a UUID).</p>`;
  if (records.length === 0)
    return html`${form}
      <p class="notice">
        No record for ${q}: not an external_id or idempotency key this deployment keeps (records go
        RESULTS_RETENTION after their report).
      </p>`;
  return html`${form}${records.map((record) => recordBlock(record))}`;
}

function recordBlock(r: ResultRecord): SafeHtml {
  return html`<h2 class="mono">${r.key}</h2>
    <dl class="record">
      <dt>external_id</dt>
      <dd class="mono">${r.external_id}</dd>
      <dt>Status</dt>
      <dd>${statusBadge(r.status)}</dd>
      <dt>Attempts</dt>
      <dd>${r.attempts}</dd>
      <dt>HTTP status</dt>
      <dd>${r.http_status ?? ""}</dd>
      <dt>Correlation id</dt>
      <dd class="mono">${r.correlation_id ?? ""}</dd>
      <dt>Ruleset version</dt>
      <dd>${r.ruleset_version ?? ""}</dd>
      <dt>Error</dt>
      <dd class="error">${r.error ?? ""}</dd>
      ${
        r.superseded_by === undefined
          ? ""
          : html`<dt>Superseded by</dt>
              <dd class="mono">${r.superseded_by}</dd>`
      }
      <dt>First / last attempt</dt>
      <dd>
        ${when(r.first_attempt_at)} ${r.last_attempt_at === undefined ? "" : `/ ${when(r.last_attempt_at)}`}
      </dd>
      ${
        r.trace_id === undefined
          ? ""
          : html`<dt>Trace id</dt>
              <dd class="mono">${r.trace_id}</dd>`
      }
      <dt>Line</dt>
      <dd>${r.line} of the first batch</dd>
      <dt>Batches</dt>
      <dd>
        ${r.batches.map((id) => html`<a class="mono" href="/batches/${encodeURIComponent(id)}">${id}</a> `)}
      </dd>
    </dl>`;
}
