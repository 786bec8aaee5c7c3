import { formatDuration } from "../config/duration.js";
import { ledgerSize } from "../ledger/footprint.js";
import { Outbox } from "../ledger/outbox.js";
import { rateSettingsOf, readSendRate } from "../queue/send-rate-view.js";
import { outboxBacklog, redisTimeMs, refusedEventCount } from "../ledger/outbox-backlog.js";
import { Retention, type KeptBecause } from "../ledger/retention.js";
import { readApiKeyRefusal } from "../queue/api-key-refusal.js";
import { remoteSourceStates } from "../ledger/remote-claims.js";
import type { BatchMeta } from "../ledger/batch-store.js";
import type { KeyStatus } from "../ledger/statuses.js";
import type { StatusCounts } from "../results/report-row.js";
import { requireKnownBatch } from "./batch-option.js";
import type { AppContext } from "./context.js";
import { probeDatabase } from "./database-probe.js";
import { countsOf } from "./summary-table.js";

/** How many batches `status` shows without --batch; the total is always given. */
const STATUS_BATCH_LIMIT = 20;

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
 *   phase (probing | holding | backing-off), refusing_since, refusing_for_capacity}`
 * - `results_database`: `null` without RESULTS_DATABASE_URL, else `{url, answers, problem}` (the URL
 *   without its password; `problem` why it does not answer, else null)
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
  readonly batches: readonly BatchStatus[];
  readonly batches_total: number;
  readonly ledger: LedgerStatus;
  readonly outbox: OutboxStatus;
  readonly results_database: DatabaseStatus | null;
  readonly sending: SendingStatus | null;
  readonly sftp_sources: readonly SftpSourceStatus[];
}

/** The fleet's sending rate (null before any process sent with the budget). */
export interface SendingStatus {
  readonly learned_per_sec: number;
  readonly fleet_sent_per_sec: number;
  readonly phase: "probing" | "holding" | "backing-off";
  readonly refusing_since: string | null;
  readonly refusing_for_capacity: boolean;
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

const KEY_REFUSED_ACTION =
  "submission is paused and nothing was marked failed: set a valid INVOICE_API_KEY, then start " +
  "`invoice-relay run`, `start` or `worker` again (a new process retries the key and resumes the queue)";

/** Reads everything `status` shows; with a batch id, only that batch (unknown: UnknownBatchError). */
export async function gatherStatus(ctx: AppContext, batchId: string | undefined): Promise<StatusReport> {
  const prefix = ctx.config.queuePrefix;
  const metas =
    batchId === undefined
      ? await recentBatches(ctx, STATUS_BATCH_LIMIT)
      : [await requireKnownBatch(ctx.batches, batchId, prefix)];
  const [keys, jobCounts, isPaused, refusal, total, rate] = await Promise.all([
    ctx.ledger.counts(),
    ctx.queue.getJobCounts("waiting", "active", "delayed", "failed", "paused"),
    ctx.queue.isPaused(),
    readApiKeyRefusal(ctx.redis, prefix),
    ctx.batches.count(),
    readSendRate(ctx.redis, prefix, rateSettingsOf(ctx.config)),
  ]);
  const count = (name: string) => jobCounts[name] ?? 0;
  return {
    queue_prefix: prefix,
    generated_at: new Date().toISOString(),
    keys,
    queue: {
      waiting: count("waiting"),
      active: count("active"),
      delayed: count("delayed"),
      failed: count("failed"),
      paused: count("paused"),
      is_paused: isPaused,
    },
    key_refused:
      refusal === undefined
        ? null
        : {
            http_status: refusal.httpStatus,
            detail: refusal.detail,
            at: new Date(refusal.at).toISOString(),
            action: KEY_REFUSED_ACTION,
          },
    batches: metas.map(batchStatus),
    batches_total: total,
    ledger: await ledgerStatus(ctx, keys),
    outbox: await outboxStatus(ctx),
    results_database:
      ctx.config.resultsDatabaseUrl === undefined ? null : await probeDatabase(ctx.config.resultsDatabaseUrl),
    sending:
      rate === undefined
        ? null
        : {
            learned_per_sec: Math.round(rate.learnedPerSec * 10) / 10,
            fleet_sent_per_sec: Math.round(rate.fleetSentPerSec * 10) / 10,
            phase: rate.phase,
            refusing_since:
              rate.refusingSince === undefined ? null : new Date(rate.refusingSince).toISOString(),
            refusing_for_capacity: rate.refusingForCapacity,
          },
    sftp_sources: await sftpSources(ctx),
  };
}

async function sftpSources(ctx: AppContext): Promise<SftpSourceStatus[]> {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const states = await remoteSourceStates(ctx.redis, ctx.config.queuePrefix);
  return [...states]
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
    }));
}

async function outboxStatus(ctx: AppContext): Promise<OutboxStatus> {
  const prefix = ctx.config.queuePrefix;
  const [on, backlog, now, refused] = await Promise.all([
    new Outbox(ctx.redis, prefix).enabled(),
    outboxBacklog(ctx.redis, prefix),
    redisTimeMs(ctx.redis),
    refusedEventCount(ctx.redis, prefix),
  ]);
  return {
    on,
    entries: backlog.entries,
    oldest_at: backlog.oldest === undefined ? null : new Date(backlog.oldest.at).toISOString(),
    // ages on Redis' clock, the clock of the entries' ids
    oldest_age_seconds:
      backlog.oldest === undefined ? null : Math.max(0, Math.round((now - backlog.oldest.at) / 1000)),
    refused,
  };
}

async function ledgerStatus(ctx: AppContext, keys: Record<KeyStatus, number>): Promise<LedgerStatus> {
  const records = Object.values(keys).reduce((a, b) => a + b, 0);
  const size = await ledgerSize(ctx.redis, ctx.config.queuePrefix, ctx.batches, records);
  const retention = new Retention(
    ctx.redis,
    ctx.config.queuePrefix,
    ctx.batches,
    ctx.config.resultsRetention,
  );
  const oldest = await retention.oldest();
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    records: size.records,
    batches: size.batches,
    bytes: size.bytes ?? null,
    redis_used_memory: size.redisUsedMemory ?? null,
    retention: formatDuration(ctx.config.resultsRetention),
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

/** The newest batches first; a record that vanished meanwhile is left out. */
async function recentBatches(ctx: AppContext, limit: number): Promise<BatchMeta[]> {
  const ids = await ctx.batches.newest(limit);
  const metas = await Promise.all(ids.map((id) => ctx.batches.get(id)));
  return metas.filter((m): m is BatchMeta => m !== undefined);
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

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
