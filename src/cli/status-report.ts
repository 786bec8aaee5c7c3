import { formatDuration } from "../config/duration.js";
import type { LedgerSize } from "../ledger/footprint.js";
import type { KeptBecause } from "../ledger/retention.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import { passStatus, type PassStatus } from "./pass-status.js";
import type { KeyStatus } from "../ledger/statuses.js";
import type { DeploymentView } from "../queue/deployment-view.js";
import type { StatusCounts } from "../results/report-row.js";
import { countsOf } from "./summary-table.js";
import { sendingStatus, speedStatus, type SendingStatus, type SpeedStatus } from "./status-sending.js";

export type { SendingStatus, SpeedStatus } from "./status-sending.js";

/**
 * What `status` reports, and exactly what `status --json` prints (one object). Field names are stable;
 * an absent value is `null`, never a missing field; times are ISO 8601 strings.
 *
 * - `queue_prefix`, `generated_at`
 * - `keys`: idempotency keys by state in the ledger, deployment-wide (also with --batch):
 *   `{queued, retrying, succeeded, failed, superseded}` (superseded: failed, and a newer version of the
 *   same external_id was sent since under another key; never sent again)
 * - `queue`: BullMQ job counts `{waiting, active, delayed, failed, paused}` and `is_paused`;
 *   `queue.failed` are jobs stopped by unexpected errors (invoices the service refused are `keys.failed`)
 * - `key_refused`: `null`, or `{http_status, detail, at, action}` when the service refused the API key
 * - `cool_down`: `null`, or `{remaining_seconds, ends_at}` while every worker is held back (an outage
 *   cool-down, or the short hold after a refused key): no invoice is taken until `ends_at`
 * - `batches`: most recent first (at most 20, or just the --batch one), each
 *   `{id, file, format, state, host, path, created_at, ingested_at, completed_at, reported_at, rows,
 *   valid_rows, pending, report_csv, summary_json, file_error, counts}` where `counts` are the row
 *   counts of the last written report `{succeeded, duplicate, rejected, failed, conflict, pending}`
 * - `batches_total`: how many batches this prefix has in all
 * - `ledger`: `{records, batches, bytes, redis_used_memory, retention, oldest_batch}`: what the ledger
 *   keeps in Redis (`bytes` estimated from MEMORY USAGE samples, null if refused), RESULTS_RETENTION as
 *   written, and the oldest batch kept `{id, created_at, expires_at, kept_because}` (`expires_at` null
 *   while it is not reported, its report counted failed rows, or it is past its retention while events
 *   from before its report wait in the outbox; `kept_because` then says which: `not reported`, `failed
 *   rows`, `waiting for export`), or null
 * - `outbox`: the events not exported to PostgreSQL yet `{on, entries, oldest_at, oldest_age_seconds,
 *   refused}` (`on`: some process started with RESULTS_DATABASE_URL turned it on; `oldest_*` null when
 *   empty; `refused`: events PostgreSQL refused as data, kept aside in the outbox-refused stream)
 * - `sending`: `null` before any process sent, else the fleet's `{learned_per_sec, fleet_sent_per_sec,
 *   fleet_accepted_per_sec, phase (probing | holding | backing-off), held_until (the service's
 *   Retry-After, or null), capped_by_concurrency, refusing_since, refusing_for_capacity}`
 * - `speed`: what limits the night's speed (docs/operations.md, "Why is my night slow?") `{limit (redis |
 *   retry-after | service | concurrency | rate-ceiling | workers | learning | idle), since, until, words,
 *   ends_at, deadline, end_words}`: `ends_at` when the invoices left end at the rate accepted lately (null
 *   when none are left or none was accepted), `deadline` the running run's --deadline, else null
 * - `results_database`: `null` without RESULTS_DATABASE_URL, else `{url, answers, problem}` (the URL
 *   without its password; `problem` why it does not answer, else null)
 * - `passes`: the last few passes, most recent first (each `run`, each scan of `start` that took files)
 *   `{id, kind (run | scan), started_at, ended_at, files, invoices, refused, busiest_second, learned_rate,
 *   exit_code, ended_without_word, left, left_out}`: `invoices` by outcome (`pending`: not final when it
 *   ended), `refused` the requests the service refused for capacity meanwhile, `busiest_second` the
 *   requests answered in its busiest whole second, every process together;
 *   `ended_at` and `exit_code` null while it runs; a `run` whose process was killed reads as ended at
 *   its last sign of life with exit 1 and `ended_without_word` true; `left` the files it saw and left
 *   where they are `{where, file, why}` (the first 50; `left_out` how many more)
 * - `sftp_sources`: each SFTP source polled so far (docs/sftp.md) `{name, last_poll_at, waiting, taken,
 *   reports_pending, last_error, last_error_at, failures}`: files seen and not settled yet, files taken
 *   in all, batches whose results wait to be uploaded, and the last error while it lasts
 */
export interface StatusReport {
  readonly queue_prefix: string;
  readonly generated_at: string;
  readonly keys: Record<KeyStatus, number>;
  readonly queue: QueueCounts;
  readonly key_refused: ApiKeyRefusedStatus | null;
  readonly cool_down: CoolDownStatus | null;
  readonly batches: readonly BatchStatus[];
  readonly batches_total: number;
  readonly ledger: LedgerStatus;
  readonly outbox: OutboxStatus;
  readonly results_database: DatabaseStatus | null;
  readonly sending: SendingStatus | null;
  readonly speed: SpeedStatus;
  readonly passes: readonly PassStatus[];
  readonly sftp_sources: readonly SftpSourceStatus[];
}

export interface SftpSourceStatus {
  readonly name: string;
  readonly last_poll_at: string | null;
  readonly waiting: number;
  readonly taken: number;
  readonly reports_pending: number;
  readonly last_error: string | null;
  readonly last_error_at: string | null;
  readonly failures: number;
}

export interface OutboxStatus {
  readonly on: boolean;
  readonly entries: number;
  readonly oldest_at: string | null;
  readonly oldest_age_seconds: number | null;
  readonly refused: number;
}

export interface DatabaseStatus {
  readonly url: string;
  readonly answers: boolean;
  readonly problem: string | null;
}

export interface LedgerStatus {
  readonly records: number;
  readonly batches: number;
  readonly bytes: number | null;
  readonly redis_used_memory: number | null;
  readonly retention: string;
  readonly oldest_batch: {
    readonly id: string;
    readonly created_at: string;
    readonly expires_at: string | null;
    readonly kept_because: KeptBecause | null;
  } | null;
}

export interface QueueCounts {
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly failed: number;
  readonly paused: number;
  readonly is_paused: boolean;
}

export interface ApiKeyRefusedStatus {
  readonly http_status: number;
  readonly detail: string;
  readonly at: string;
  readonly action: string;
}

/** The hold on every worker: seconds left (rounded up) and when it ends. */
export interface CoolDownStatus {
  readonly remaining_seconds: number;
  readonly ends_at: string;
}

export interface BatchStatus {
  readonly id: string;
  readonly file: string;
  readonly format: BatchMeta["format"];
  readonly state: BatchMeta["state"];
  readonly host: string | null;
  readonly path: string;
  readonly created_at: string;
  readonly ingested_at: string | null;
  readonly completed_at: string | null;
  readonly reported_at: string | null;
  readonly rows: number | null;
  readonly valid_rows: number | null;
  readonly pending: number | null;
  readonly report_csv: string | null;
  readonly summary_json: string | null;
  readonly file_error: string | null;
  readonly counts: StatusCounts | null;
  /** The batch its file was taken again as, whole, after it grew or changed since its claim. */
  readonly replaced_by: string | null;
}

/** What to do about a refused key, naming the setting the refused process read it from, as `run` does. */
const keyRefusedAction = (setting: string | undefined): string =>
  `submission is paused and nothing was marked failed: fix ${setting ?? "INVOICE_API_KEY"}, then start ` +
  "`invoice-relay run`, `start` or `worker` again (a new process retries the key and resumes the queue)";

/** What `status` reads, each part once. */
export interface StatusParts {
  readonly prefix: string;
  readonly retentionMs: number;
  /** This machine's clock at the reading (`generated_at`, and when a cool-down ends). */
  readonly now: number;
  readonly view: DeploymentView;
  /** The batches shown. */
  readonly metas: readonly BatchMeta[];
  readonly size: LedgerSize;
  readonly database: DatabaseStatus | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** The report from what was read. Pure. */
export function statusReport(parts: StatusParts): StatusReport {
  const { view } = parts;
  const refusal = view.apiKeyRefusal;
  return {
    queue_prefix: parts.prefix,
    generated_at: new Date(parts.now).toISOString(),
    keys: { ...view.census.byStatus },
    queue: { ...view.queue.counts, is_paused: view.queue.isPaused },
    key_refused:
      refusal === undefined
        ? null
        : {
            http_status: refusal.httpStatus,
            detail: refusal.detail,
            at: new Date(refusal.at).toISOString(),
            action: keyRefusedAction(refusal.setting),
          },
    cool_down:
      view.coolDownMs > 0
        ? {
            remaining_seconds: Math.ceil(view.coolDownMs / 1000),
            ends_at: new Date(parts.now + view.coolDownMs).toISOString(),
          }
        : null,
    batches: parts.metas.map(batchStatus),
    batches_total: view.census.batches,
    ledger: ledgerStatus(parts),
    outbox: outboxStatus(view),
    results_database: parts.database,
    sending: sendingStatus(view),
    speed: speedStatus(view),
    passes: view.passes.map(passStatus),
    sftp_sources: [...view.sftpSources]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, s]) => ({
        name,
        last_poll_at: iso(s.lastPollAt),
        waiting: s.waiting,
        taken: s.claimed,
        reports_pending: s.reportsPending,
        last_error: s.lastError ?? null,
        last_error_at: iso(s.lastErrorAt),
        failures: s.failures,
      })),
  };
}

function outboxStatus(view: DeploymentView): OutboxStatus {
  const { on, backlog, refused } = view.outbox;
  return {
    on,
    entries: backlog.entries,
    oldest_at: iso(backlog.oldest?.at),
    // ages on Redis' clock, the clock of the entries' ids
    oldest_age_seconds:
      backlog.oldest === undefined
        ? null
        : Math.max(0, Math.round((view.census.at - backlog.oldest.at) / 1000)),
    refused,
  };
}

function ledgerStatus(parts: StatusParts): LedgerStatus {
  const { census, oldestBatch: oldest } = parts.view;
  return {
    records: census.records,
    batches: census.batches,
    bytes: parts.size.bytes ?? null,
    redis_used_memory: parts.size.redisUsedMemory ?? null,
    retention: formatDuration(parts.retentionMs),
    oldest_batch:
      oldest === undefined
        ? null
        : {
            id: oldest.id,
            created_at: new Date(oldest.createdAt).toISOString(),
            expires_at: iso(oldest.expiresAt),
            kept_because: oldest.why ?? null,
          },
  };
}

function batchStatus(meta: BatchMeta): BatchStatus {
  return {
    id: meta.id,
    file: meta.file,
    format: meta.format,
    state: meta.state,
    host: meta.host ?? null,
    path: meta.path,
    created_at: new Date(meta.created_at).toISOString(),
    ingested_at: iso(meta.ingested_at),
    completed_at: iso(meta.completed_at),
    reported_at: iso(meta.reported_at),
    rows: meta.rows ?? null,
    valid_rows: meta.valid_rows ?? null,
    // clamped at 0 the way `run` counts it: a negative count would only confuse a reader
    pending: meta.pending === undefined ? null : Math.max(0, meta.pending),
    report_csv: meta.report_csv ?? null,
    summary_json: meta.summary_json ?? null,
    file_error: meta.file_error ?? null,
    counts: meta.counts === undefined ? null : countsOf(meta),
    replaced_by: meta.replaced_by ?? null,
  };
}
