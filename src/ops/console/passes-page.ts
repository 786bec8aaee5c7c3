import { spokenDuration as duration } from "../../config/duration.js";
import type { BatchMeta } from "../../ledger/batch-store.js";
import { PASS_OUTCOMES, passSeriesEnd, type PassRecord } from "../../ledger/passes.js";
import type { SecondPoint } from "../../ledger/send-series.js";
import { shownName } from "../../names/shown-text.js";
import { statusBadge } from "./batches-page.js";
import { html, type SafeHtml } from "./html.js";
import { when } from "./layout.js";
import { passChart } from "./pass-chart.js";

/** What each exit code of a pass says (README.md, the exit codes of `run`). */
const EXITS: Readonly<Record<number, { readonly text: string; readonly badge: string }>> = {
  0: { text: "0 all well", badge: "succeeded" },
  2: { text: "2 finished with problems", badge: "failed" },
  1: { text: "1 could not finish", badge: "failed" },
};

/**
 * `/passes`: the night at a glance: the chart of the latest pass (`points`: the fleet's answers over
 * it), then the newest passes, one line each, with what each came to.
 */
export function passesPage(
  passes: readonly PassRecord[],
  total: number,
  points: readonly SecondPoint[],
  now: number,
): SafeHtml {
  const latest = passes[0];
  if (latest === undefined)
    return html`<p class="notice">
      No passes yet: each <code>run</code>, and each scan of <code>start</code> that takes files, shows up
      here.
    </p>`;
  return html`<h2>
      Latest pass, <a class="mono id" href="/passes/${encodeURIComponent(latest.id)}">${latest.id}</a>
    </h2>
    ${passChart({ from: latest.startedAt, to: passSeriesEnd(latest) ?? now, points })}
    <h2>Passes</h2>
    <p class="muted">The ${passes.length} newest of ${total} pass(es), kept RESULTS_RETENTION.</p>
    <table class="passes">
      <thead>
        <tr>
          <th>Pass</th>
          <th>Started</th>
          <th>Took</th>
          <th class="num">Files</th>
          <th>Invoices by outcome</th>
          <th class="num">Refused (429)</th>
          <th class="num">Busiest second</th>
          <th>Exit</th>
        </tr>
      </thead>
      <tbody>
        ${passes.map(
          (pass) =>
            html`<tr>
              <td>
                <a class="mono id" href="/passes/${encodeURIComponent(pass.id)}">${pass.id}</a>
                <div class="muted">${pass.kind === "run" ? "run" : "scan of start"}</div>
              </td>
              <td>${when(pass.startedAt)}</td>
              <td>${pass.endedAt === undefined ? "" : duration(pass.endedAt - pass.startedAt)}</td>
              <td class="num">${pass.batches.length}</td>
              <td>${outcomes(pass)}</td>
              <td class="num">${pass.refused ?? ""}</td>
              <td class="num">${pass.busiestSecond === undefined ? "" : `${pass.busiestSecond} requests`}</td>
              <td>${exit(pass)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

/** `/passes/{id}`: the pass, its chart, and its batches. */
export function passPage(
  pass: PassRecord,
  points: readonly SecondPoint[],
  batches: readonly BatchMeta[],
  now: number,
): SafeHtml {
  const end = pass.endedAt ?? now;
  const ended =
    pass.endedWithoutWord === true
      ? html`last heard at ${when(end)}
          <span class="muted">after ${duration(end - pass.startedAt)}; its end is not known more precisely</span>`
      : html`${when(end)} <span class="muted">after ${duration(end - pass.startedAt)}</span>`;
  return html`<dl class="record">
      <dt>Kind</dt>
      <dd>${pass.kind === "run" ? "run" : "scan of start"}</dd>
      <dt>Started</dt>
      <dd>${when(pass.startedAt)}</dd>
      <dt>Ended</dt>
      <dd>
        ${
          pass.endedAt === undefined
            ? "not yet (or its process stopped before it ended); the chart runs to now"
            : ended
        }
      </dd>
      <dt>Exit</dt>
      <dd>${exit(pass)}</dd>
      <dt>Invoices</dt>
      <dd>${outcomes(pass)}</dd>
      <dt>Refused for capacity</dt>
      <dd>${pass.refused ?? ""}</dd>
      <dt>Busiest second</dt>
      <dd>
        ${pass.busiestSecond === undefined ? "" : `${pass.busiestSecond} requests answered in one whole second, every process together`}
      </dd>
      <dt>Learned rate at the end</dt>
      <dd>${pass.learnedRate === undefined ? "" : `${rate(pass.learnedRate)} requests/s`}</dd>
    </dl>
    ${leftFiles(pass)}
    <h2>Requests per second</h2>
    ${passChart({ from: pass.startedAt, to: passSeriesEnd(pass) ?? now, points })}
    <h2>Files</h2>
    ${
      batches.length === 0
        ? html`<p class="muted">No file was taken in this pass.</p>`
        : html`<table class="batches">
          <thead>
            <tr>
              <th>File</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            ${batches.map(
              (b) =>
                html`<tr>
                  <td>
                    <a href="/batches/${encodeURIComponent(b.id)}">${shownName(b.file)}</a>
                    <div class="muted mono id">${b.id}</div>
                  </td>
                  <td>${statusBadge(b.state)}</td>
                </tr>`,
            )}
          </tbody>
        </table>`
    }
    ${
      pass.batches.length > batches.length
        ? html`<p class="muted">
          ${pass.batches.length - batches.length} more batch(es) of this pass are no longer kept
          (RESULTS_RETENTION) or not shown.
        </p>`
        : ""
    }`;
}

/** The files the pass saw and left where they are, each with why: none goes unnamed. */
function leftFiles(pass: PassRecord): SafeHtml | string {
  const left = pass.left ?? [];
  if (left.length === 0) return "";
  return html`<h2>Files left where they are</h2>
    <ul class="left">
      ${left.map((f) => html`<li><span class="mono">${f.where}: ${f.shown}</span> ${f.why}</li>`)}
    </ul>
    ${
      (pass.leftOut ?? 0) > 0
        ? html`<p class="muted">… and ${pass.leftOut ?? 0} more (the log names each).</p>`
        : ""
    }`;
}

function outcomes(pass: PassRecord): SafeHtml {
  const shown = PASS_OUTCOMES.filter((s) => (pass.invoices[s] ?? 0) > 0);
  if (shown.length === 0)
    return html`<span class="muted">${pass.endedAt === undefined ? "running" : "none"}</span>`;
  return html`${shown.map((s) => html`${pass.invoices[s] ?? 0} ${statusBadge(s)} `)}`;
}

function exit(pass: PassRecord): SafeHtml {
  if (pass.exitCode === undefined) return statusBadge("running");
  const known = EXITS[pass.exitCode];
  const text = `${known?.text ?? String(pass.exitCode)}${pass.endedWithoutWord === true ? ": ended without a word (killed)" : ""}`;
  return html`<span class="status status-${known?.badge ?? "failed"}">${text}</span>`;
}

function rate(perSecond: number): string {
  return perSecond >= 100 ? String(Math.round(perSecond)) : String(Math.round(perSecond * 10) / 10);
}
