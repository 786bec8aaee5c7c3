import { formatDuration } from "../../config/duration.js";
import { maskUrlCredentials } from "../../config/url-credentials.js";
import type { FirstError, Notice, NoticeBatch, NoticeEvent } from "./notice.js";
import { code, plain } from "./plain-text.js";

/** Rows shown per batch: enough to see what went wrong, the report has the rest. */
export const FIRST_ERRORS_MAX = 3;
/** Batches listed in the text; the JSON lists up to BATCHES_MAX. */
const TEXT_BATCHES_MAX = 10;
const BATCHES_MAX = 100;
const ERROR_CHARS = 300;

/** What a notice says of one batch, before it is shaped for the webhook. */
export interface BatchFacts {
  readonly file: string;
  readonly id: string;
  readonly state: string;
  readonly counts: Readonly<Record<string, number>>;
  readonly firstErrors: readonly FirstError[];
}

export interface NoticeContext {
  readonly queuePrefix: string;
  /** CONSOLE_URL; links are left out without it. */
  readonly consoleUrl: string | undefined;
  readonly now: Date;
}

/** `{CONSOLE_URL}/batches/{id}`, whether or not CONSOLE_URL ends in a slash; undefined without it. */
export function batchUrl(consoleUrl: string | undefined, batchId: string): string | undefined {
  if (consoleUrl === undefined) return undefined;
  // An alert is read by everyone in a channel: a credential in CONSOLE_URL stays out of its links.
  const shown = maskUrlCredentials(consoleUrl);
  const base = shown.endsWith("/") ? shown : `${shown}/`;
  return new URL(`batches/${encodeURIComponent(batchId)}`, base).href;
}

/** The alert of a `run` that ended with exit 1 or 2. */
export function runNotice(
  exitCode: number,
  batches: readonly BatchFacts[],
  reason: string | undefined,
  ctx: NoticeContext,
): Notice {
  const event: NoticeEvent = exitCode === 2 ? "run_finished_with_problems" : "run_could_not_finish";
  const title =
    exitCode === 2
      ? `invoice-relay run finished with problems (exit 2) [${plain(ctx.queuePrefix, 60)}]`
      : `invoice-relay run could not finish (exit ${exitCode}) [${plain(ctx.queuePrefix, 60)}]`;
  const lines = [title];
  if (reason !== undefined) lines.push(plain(reason, 400));
  return build(event, exitCode, reason, batches, lines, ctx);
}

/** The alert of the service refusing the API key: submission is paused until the key is fixed. */
export function apiKeyRefusedNotice(
  httpStatus: number,
  detail: string,
  ctx: NoticeContext,
  /** Where the key is set (src/config/api-key-setting.ts). */
  setting: string,
): Notice {
  const reason =
    `The invoice service refused the API key (HTTP ${httpStatus}: ${detail}). Submission is paused and ` +
    `nothing was marked failed; fix ${setting} and restart (or run again).`;
  const lines = [
    `invoice-relay: the API key was refused [${plain(ctx.queuePrefix, 60)}]`,
    plain(reason, 400),
  ];
  return build("api_key_refused", null, reason, [], lines, ctx);
}

/** The alert of a batch still not reported `stuckAfterMs` after its drop. */
export function stuckBatchNotice(
  batch: BatchFacts,
  ageMs: number,
  stuckAfterMs: number,
  ctx: NoticeContext,
): Notice {
  const pending = batch.counts["pending"] ?? 0;
  const reason =
    `Batch ${batch.id} is not finished ${formatDuration(Math.floor(ageMs / 1000) * 1000)} after its drop ` +
    `(NOTIFY_STUCK_AFTER=${formatDuration(stuckAfterMs)}): state ${batch.state}, ${pending} invoice(s) not final. ` +
    "See invoice-relay status --batch for what is waiting or retrying.";
  const lines = [`invoice-relay: a batch is stuck [${plain(ctx.queuePrefix, 60)}]`, plain(reason, 400)];
  return build("batch_stuck", null, reason, [batch], lines, ctx);
}

function build(
  event: NoticeEvent,
  exitCode: number | null,
  reason: string | undefined,
  facts: readonly BatchFacts[],
  lines: string[],
  ctx: NoticeContext,
): Notice {
  const batches = facts.slice(0, BATCHES_MAX).map((b) => noticeBatch(b, ctx.consoleUrl));
  for (const b of batches.slice(0, TEXT_BATCHES_MAX)) lines.push(...batchLines(b));
  if (facts.length > TEXT_BATCHES_MAX) lines.push(`… and ${facts.length - TEXT_BATCHES_MAX} more file(s)`);
  return {
    event,
    text: lines.join("\n"),
    exit_code: exitCode,
    reason: reason ?? null,
    queue_prefix: ctx.queuePrefix,
    batches,
    at: ctx.now.toISOString(),
  };
}

function noticeBatch(facts: BatchFacts, consoleUrl: string | undefined): NoticeBatch {
  return {
    file: facts.file,
    batch: facts.id,
    state: facts.state,
    counts: facts.counts,
    first_errors: facts.firstErrors.slice(0, FIRST_ERRORS_MAX).map((e) => ({
      line: e.line,
      external_id: e.external_id,
      error: e.error.length > ERROR_CHARS ? `${e.error.slice(0, ERROR_CHARS - 1)}…` : e.error,
    })),
    url: batchUrl(consoleUrl, facts.id) ?? null,
  };
}

/** `• `eu.csv` (batch …): 3 succeeded, 1 rejected`, its first errors, its link. */
function batchLines(batch: NoticeBatch): string[] {
  const counted = Object.entries(batch.counts)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${plain(status, 20)}`);
  const state = batch.state === "reported" ? "" : `, ${plain(batch.state, 20)}`;
  const lines = [
    `• ${code(batch.file)} (batch ${code(batch.batch, 60)}${state}): ${counted.length > 0 ? counted.join(", ") : "no rows"}`,
  ];
  for (const e of batch.first_errors)
    lines.push(
      `    line ${e.line}${e.external_id === null ? "" : ` (${plain(e.external_id, 60)})`}: ${plain(e.error, 160)}`,
    );
  if (batch.url !== null) lines.push(`    ${batch.url}`);
  return lines;
}
