/** What an alert says: the JSON body POSTed to NOTIFY_WEBHOOK_URL (docs/operations.md, "Alerts"). */

export const NOTICE_EVENTS = [
  "run_finished_with_problems",
  "run_could_not_finish",
  "api_key_refused",
  "batch_stuck",
] as const;
export type NoticeEvent = (typeof NOTICE_EVENTS)[number];

/** One row that did not succeed, as its report shows it. */
export interface FirstError {
  readonly line: number;
  readonly external_id: string | null;
  readonly error: string;
}

export interface NoticeBatch {
  readonly file: string;
  readonly batch: string;
  /** The batch's state in the ledger (reported, rejected, changed, ingested, ingesting). */
  readonly state: string;
  /** Rows per status; `pending` for rows not final yet. */
  readonly counts: Readonly<Record<string, number>>;
  /** The first few rows that were rejected, failed or in conflict, in file order. */
  readonly first_errors: readonly FirstError[];
  /** The batch in the web console (CONSOLE_URL), or null when CONSOLE_URL is not set. */
  readonly url: string | null;
}

export interface Notice {
  readonly event: NoticeEvent;
  /** Plain text for Slack and Teams: a title line, then a few lines of detail. */
  readonly text: string;
  /** The exit code of the `run` that sent it; null for the events of no run. */
  readonly exit_code: number | null;
  /** Why, in words, when the batches do not say it (a refused key, a deadline, a stuck batch). */
  readonly reason: string | null;
  /** QUEUE_PREFIX: which deployment sends it. */
  readonly queue_prefix: string;
  readonly batches: readonly NoticeBatch[];
  /** ISO time it was built. */
  readonly at: string;
}
