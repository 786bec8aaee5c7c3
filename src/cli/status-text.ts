import type { KeptBecause } from "../ledger/retention.js";
import { ROW_STATUSES } from "../results/report-row.js";
import { passLeftLines, passTable } from "./pass-status.js";
import type { BatchStatus, StatusReport } from "./status-report.js";
import { exportLines } from "./status-export-text.js";
import { escapedText, shownName } from "../names/shown-text.js";

/** `status` for people: the totals, a table of batches, then what to do about what is not well. Pure. */
export function statusText(report: StatusReport): string {
  const { keys, queue } = report;
  const lines = [
    `invoice-relay status (QUEUE_PREFIX=${report.queue_prefix}, ${report.generated_at})`,
    "",
    `invoices by key state  queued ${keys.queued}  retrying ${keys.retrying}  succeeded ${keys.succeeded}  failed ${keys.failed}  superseded ${keys.superseded}`,
    `queue jobs             waiting ${queue.waiting}  active ${queue.active}  delayed ${queue.delayed}  ` +
      `failed ${queue.failed}  paused ${queue.paused}  (${queue.is_paused ? "PAUSED" : "running"})`,
    ledgerLine(report),
    ...speedLines(report),
    ...exportLines(report),
    ...report.sftp_sources.map(
      (src) =>
        `sftp source ${src.name.padEnd(9)} last poll ${src.last_poll_at ?? "never"}  waiting ${src.waiting}  ` +
        `taken ${src.taken}  results to upload ${src.reports_pending}` +
        (src.last_error === null ? "" : `  FAILING (${src.failures}×)`),
    ),
    "",
  ];
  if (report.passes.length > 0)
    lines.push(
      `passes: the last ${report.passes.length}, most recent first (the console's /passes shows more)`,
      passTable(report.passes),
      ...passLeftLines(report.passes),
      "",
    );
  if (report.batches.length === 0) lines.push("no batches yet: drop files and run `invoice-relay run`");
  else {
    const shown =
      report.batches.length < report.batches_total
        ? `${report.batches.length} of ${report.batches_total}, most recent first; \`--batch ID\` shows any other`
        : `${report.batches.length}, most recent first`;
    lines.push(`batches: ${shown}`, batchTable(report.batches));
  }
  // Advice quotes file names and errors: each stays one line, as printed.
  const advice = nextSteps(report).map(escapedText);
  if (advice.length > 0) lines.push("", "attention:", ...advice.map((a) => `  - ${a}`));
  return `${lines.join("\n")}\n`;
}

/** What limits the night's speed, and when it ends (src/queue/speed-limit.ts; docs/operations.md). */
function speedLines(report: StatusReport): string[] {
  const { sending, speed } = report;
  return [
    ...(sending === null
      ? []
      : [`sending                ${sending.fleet_sent_per_sec}/s sent lately (every process together)`]),
    `speed limit            ${speed.words}`,
    ...(speed.end_words === null ? [] : [`night ends             ${speed.end_words}`]),
  ];
}

const COUNT_COLUMNS = ROW_STATUSES;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** What the ledger keeps in Redis, and when the oldest of it goes. */
function ledgerLine(report: StatusReport): string {
  const ledger = report.ledger;
  const size = ledger.bytes === null ? "size unknown (MEMORY USAGE refused)" : `about ${mb(ledger.bytes)}`;
  const redis = ledger.redis_used_memory === null ? "" : ` of Redis' ${mb(ledger.redis_used_memory)}`;
  const oldest = ledger.oldest_batch;
  const expiry =
    oldest === null
      ? "nothing kept"
      : oldest.expires_at !== null
        ? `oldest batch ${oldest.id} goes at ${oldest.expires_at}`
        : `oldest batch ${oldest.id} is kept: ${keptBecause(oldest.kept_because, report)}`;
  return (
    `ledger                 ${ledger.records} records  ${ledger.batches} batches  ${size}${redis}; ` +
    `retention ${ledger.retention}, ${expiry}`
  );
}

/** Why the oldest batch outlives its retention, in words. */
function keptBecause(why: KeptBecause | null, report: StatusReport): string {
  switch (why) {
    case "failed rows":
      return "its report has failed rows (retry or re-drop them)";
    case "waiting for export":
      // past its retention: the results of record do not have all of it yet
      return (
        `waiting for export (${report.outbox.entries} event(s) in the outbox, the oldest from ` +
        `${report.outbox.oldest_at ?? "now"})`
      );
    default:
      return "not reported yet";
  }
}

/** Counts come from the last written report; a batch not reported yet shows `-` there. */
function batchTable(batches: readonly BatchStatus[]): string {
  const header = ["batch", "file", "state", "rows", "valid", "pending", ...COUNT_COLUMNS, "report"];
  const rows = batches.map((b) => [
    b.id,
    shownName(b.file),
    b.state,
    numberCell(b.rows),
    numberCell(b.valid_rows),
    numberCell(b.pending),
    ...COUNT_COLUMNS.map((s) => numberCell(b.counts?.[s] ?? null)),
    escapedText(reportCell(b)),
  ]);
  const last = header.length - 1;
  const widths = header.map((h, i) =>
    i === last ? 0 : Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)),
  );
  // text columns left-aligned, numbers right-aligned, the report path last and unpadded
  const format = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === last ? c : i >= 3 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ");
  return [format(header), ...rows.map(format)].join("\n");
}

const numberCell = (n: number | null): string => (n === null ? "-" : String(n));

function reportCell(b: BatchStatus): string {
  const cell = reportPathCell(b);
  return b.replaced_by === null ? cell : `${cell}; replaced by ${b.replaced_by} (the whole file taken again)`;
}

function reportPathCell(b: BatchStatus): string {
  if (b.state === "rejected") return `REJECTED: ${b.file_error ?? "unreadable file"}`;
  if (b.state === "changed") return `NOT REPORTED: ${b.file_error ?? "changed after it was claimed"}`;
  if (b.report_csv === null)
    return b.file_error === null ? "(not written yet)" : `NOT WRITTEN: ${b.file_error}`;
  // a batch re-opened by `retry` keeps its old report until its invoices are final again
  return b.state === "reported" ? b.report_csv : `${b.report_csv} (to be rewritten)`;
}

function nextSteps(report: StatusReport): string[] {
  const sftp = report.sftp_sources
    .filter((src) => src.last_error !== null)
    .map(
      (src) =>
        `SFTP source ${src.name} failed at ${src.last_error_at ?? "?"}: ${src.last_error ?? ""}; its files wait on ` +
        "the server and are taken at the next poll that succeeds (docs/sftp.md)",
    );
  return [...sftp, ...nextStepsBesidesSftp(report)];
}

function nextStepsBesidesSftp(report: StatusReport): string[] {
  const { keys, queue } = report;
  const advice: string[] = [];
  if (report.key_refused !== null) {
    const r = report.key_refused;
    advice.push(
      `API KEY REFUSED by the invoice service at ${r.at} (HTTP ${r.http_status}: ${r.detail}): ${r.action}`,
    );
  } else if (report.sending?.refusing_for_capacity === true) {
    advice.push(
      `the invoice service is REFUSING FOR CAPACITY (429 to every request since ${report.sending.refusing_since ?? "?"}): ` +
        "a quota spent? Nothing is marked failed; the invoices stay queued and go as soon as it accepts again",
    );
  } else if (queue.is_paused) {
    advice.push("the queue is paused: no worker takes invoices until it is resumed");
  }
  // the hold after a refused key is a cool-down too: the refusal above says all there is to do
  if (report.cool_down !== null && report.key_refused === null)
    advice.push(
      `OUTAGE COOL-DOWN: no worker takes new invoices for another ${report.cool_down.remaining_seconds} s ` +
        `(until ${report.cool_down.ends_at}) after many consecutive retryable failures; nothing is marked ` +
        "failed, and the invoices are taken again once it ends",
    );
  if (keys.failed > 0)
    advice.push(
      `${keys.failed} invoice(s) failed: \`invoice-relay results --batch ID\` shows why; ` +
        "`invoice-relay retry` re-enqueues them with their original keys once the cause is fixed",
    );
  if (keys.superseded > 0)
    advice.push(
      `${keys.superseded} invoice(s) superseded: each failed, and a newer version of its external_id was ` +
        "sent since; nothing to do (`retry` never sends them)",
    );
  if (queue.failed > 0)
    advice.push(
      `${queue.failed} job(s) stopped on unexpected errors (see the workers' logs); ` +
        "`invoice-relay retry` re-drives them",
    );
  const db = report.results_database;
  if (db !== null && !db.answers)
    advice.push(
      `the results database at ${db.url} does not answer: submission goes on and the outbox in Redis keeps ` +
        "the results until it is back (then the running processes export them)",
    );
  if (db === null && report.outbox.on)
    advice.push(
      "this deployment exports to PostgreSQL (its outbox is on) but RESULTS_DATABASE_URL is not set here: " +
        "commands that write refuse to start. Set it again, or run `invoice-relay db detach` to go on with " +
        "Redis only (it drops the events not exported yet)",
    );
  const inFlight = keys.queued + keys.retrying;
  const jobs = queue.waiting + queue.active + queue.delayed + queue.paused;
  if (inFlight > 0 && jobs === 0)
    advice.push(
      `${inFlight} invoice(s) wait with no job to send them (the queue lost them, or a job was deleted ` +
        "under a key put back to queued): `invoice-relay run` gives each its job back, from its file",
    );
  else if (inFlight > 0)
    advice.push(
      `${inFlight} invoice(s) not final yet: a running \`invoice-relay start\` or \`worker\` submits them, ` +
        "or the next `invoice-relay run`",
    );
  return advice;
}
