import type { DeploymentView } from "../../queue/deployment-view.js";
import { speedOf, type SpeedView } from "../../queue/speed-limit.js";
import type { RemoteSourceState } from "../../ledger/remote-claims.js";
import { html, type SafeHtml } from "./html.js";
import { when } from "./layout.js";

/** What the queue page shows of the deployment's view (the reading `status` and /metrics make too). */
export type QueueView = SpeedView & Pick<DeploymentView, "coolDownMs" | "apiKeyRefusal" | "sftpSources">;

/**
 * `/queue`: the submission queue, the outage cool-down, whether the service refused the API key, what
 * limits the night's speed, and the SFTP sources files come from.
 */
export function queuePage(view: QueueView): SafeHtml {
  const names = ["waiting", "delayed", "active", "paused", "failed"] as const;
  const refusal = view.apiKeyRefusal;
  return html`${
    refusal === undefined
      ? html`<p class="notice good">The invoice service has not refused the API key.</p>`
      : html`<p class="notice bad">
            The invoice service refused the API key (HTTP ${refusal.httpStatus}) at ${when(refusal.at)}:
            ${refusal.detail}. Submission is paused and nothing was marked failed: fix
            ${refusal.setting ?? "INVOICE_API_KEY"}, then start run, start or worker again.
          </p>`
  }
    ${
      view.coolDownMs > 0
        ? html`<p class="notice bad">
            Outage cool-down: no new jobs are taken for another ${Math.ceil(view.coolDownMs / 1000)} s after
            many consecutive retryable failures.
          </p>`
        : html`<p class="muted">No outage cool-down in force.</p>`
    }
    ${speedNotice(view)}
    <p>
      ${view.queue.isPaused ? html`<span class="status status-failed">paused</span>` : html`<span class="status status-succeeded">running</span>`}
    </p>
    <table class="queue">
      <thead>
        <tr>
          ${names.map((n) => html`<th class="num">${n}</th>`)}
        </tr>
      </thead>
      <tbody>
        <tr>
          ${names.map((n) => html`<td class="num">${view.queue.counts[n]}</td>`)}
        </tr>
      </tbody>
    </table>
    <p class="muted">
      failed: jobs stopped by unexpected errors (invoices the service refused are failed in the ledger, per
      batch).
    </p>
    ${view.sftpSources.size === 0 ? html`` : sourcesTable(view.sftpSources)}`;
}

function sourcesTable(sources: ReadonlyMap<string, RemoteSourceState>): SafeHtml {
  const rows = [...sources].sort(([a], [b]) => a.localeCompare(b));
  return html`<h2>SFTP sources</h2>
    <table class="sources">
      <thead>
        <tr>
          <th>source</th>
          <th>last poll</th>
          <th class="num">files waiting</th>
          <th class="num">taken</th>
          <th class="num">results to upload</th>
          <th>last error</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          ([name, s]) => html`<tr>
            <td>${name}</td>
            <td>${s.lastPollAt === undefined ? "never" : when(s.lastPollAt)}</td>
            <td class="num">${s.waiting}</td>
            <td class="num">${s.claimed}</td>
            <td class="num">${s.reportsPending}</td>
            <td>${s.lastError === undefined ? "" : html`<span class="status status-failed">${s.lastError}</span>`}</td>
          </tr>`,
        )}
      </tbody>
    </table>`;
}

/** What limits the night's speed and when it ends (the words `status` prints), and a service refusing all. */
function speedNotice(view: SpeedView): SafeHtml {
  const speed = speedOf(view);
  const sending = view.sendRate;
  const rate = html`<p class="sending">Speed limit: ${speed.words}.</p>
    ${speed.endWords === undefined ? html`` : html`<p class="sending">Night ends: ${speed.endWords}.</p>`}
    <p class="muted">
      ${sending === undefined ? "Nothing sent yet" : `${Math.round(sending.fleetSentPerSec * 10) / 10}/s sent lately`}
      (every process together); docs/operations.md, "Why is my night slow?", says what to do.
    </p>`;
  if (sending?.refusingForCapacity !== true) return rate;
  return html`${rate}<p class="notice bad">
      The invoice service is refusing for capacity: 429 to every request since
      ${when(sending.refusingSince ?? 0)}. Nothing is marked failed; the invoices stay queued.
    </p>`;
}
