import type pg from "pg";
import { lockBatches, writeBatchRows } from "./export-rows.js";
import { at, clean, lastBy, later, newestBy } from "./export-text.js";
import type { AttemptEvent, BatchEvent, OutboxEvent, RecordEvent, RowsEvent } from "./outbox-events.js";

/** An event with the id of the stream entry that carried it. */
export interface IdentifiedEvent {
  readonly id: string;
  readonly event: OutboxEvent;
}

/** The answer's body: as JSON when it parses as JSON, else as text (the excerpt). */
function body(text: string | null): { json: string | null; excerpt: string | null } {
  if (text === null) return { json: null, excerpt: null };
  try {
    JSON.parse(text);
    // jsonb refuses the \u0000 escape; keep such a body as text
    if (!text.includes("\\u0000")) return { json: text, excerpt: null };
  } catch {
    // not JSON: kept as text
  }
  return { json: null, excerpt: clean(text) };
}

/**
 * Writes the events of one read of the outbox in ONE transaction, one multi-row statement per table
 * (results and attempts from one JSON document, batches and their lines from arrays unnested: any number
 * of rows, one parameter per column or per statement). Every statement is idempotent and gives the same
 * end whatever order the events come in: attempts are written once per (key, attempt); a record or a
 * batch only over an older event; a batch's lines only from its newest report generation (export-rows.ts).
 */
export async function exportEvents(client: pg.ClientBase, events: readonly IdentifiedEvent[]): Promise<void> {
  const batches: { id: string; e: BatchEvent }[] = [];
  const records: { id: string; e: RecordEvent }[] = [];
  const attempts: AttemptEvent[] = [];
  const rows: RowsEvent[] = [];
  for (const { id, event } of events) {
    if (event.t === "batch") batches.push({ id, e: event });
    else if (event.t === "record") records.push({ id, e: event });
    else if (event.t === "attempt") attempts.push(event);
    else rows.push(event);
  }
  await client.query("BEGIN");
  try {
    await lockBatches(client, [...batches.map((b) => b.e.batch), ...rows.map((r) => r.batch)]);
    await upsertBatches(
      client,
      newestBy(batches, (b) => b.e.batch),
    );
    await upsertRecords(
      client,
      newestBy(records, (r) => r.e.key),
    );
    await insertAttempts(
      client,
      lastBy(attempts, (a) => `${a.key}:${a.n}`),
    );
    await writeBatchRows(client, rows);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

async function upsertBatches(
  client: pg.ClientBase,
  items: readonly { id: string; e: BatchEvent }[],
): Promise<void> {
  if (items.length === 0) return;
  const col = <T>(pick: (e: BatchEvent) => T) => items.map((b) => pick(b.e));
  await client.query(
    `INSERT INTO batches (batch_id, file, format, created_at, state, size_bytes, sha256, rows, valid_rows,
                          counts, report_csv, summary_json, profile, file_error, reported_at, event_id, replaced_by,
                          updated_at)
     SELECT b, f, fmt, ${at("cr")}, st, sz, sha, r, v, coalesce(c::jsonb, '{}'::jsonb), rc, sj, p, fe,
            ${at("rep")}, ev, rb, now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[],
                   $8::int[], $9::int[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
                   $15::bigint[], $16::text[], $17::text[])
         AS u(b, f, fmt, cr, st, sz, sha, r, v, c, rc, sj, p, fe, rep, ev, rb)
     ON CONFLICT (batch_id) DO UPDATE SET
       file = EXCLUDED.file, format = EXCLUDED.format, created_at = EXCLUDED.created_at,
       state = EXCLUDED.state, size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256,
       rows = EXCLUDED.rows, valid_rows = EXCLUDED.valid_rows, counts = EXCLUDED.counts,
       report_csv = EXCLUDED.report_csv, summary_json = EXCLUDED.summary_json, profile = EXCLUDED.profile,
       file_error = EXCLUDED.file_error, reported_at = EXCLUDED.reported_at, event_id = EXCLUDED.event_id,
       replaced_by = EXCLUDED.replaced_by, updated_at = now()
     WHERE batches.event_id IS NULL OR ${later("EXCLUDED.event_id", "batches.event_id")}`,
    [
      col((e) => e.batch),
      col((e) => clean(e.file)),
      col((e) => e.format),
      col((e) => e.created),
      col((e) => e.state),
      col((e) => e.size),
      col((e) => e.sha256),
      col((e) => e.rows),
      col((e) => e.valid),
      col((e) => (e.counts === null ? null : JSON.stringify(e.counts))),
      col((e) => clean(e.report_csv)),
      col((e) => clean(e.summary_json)),
      col((e) => clean(e.profile)),
      col((e) => clean(e.file_error)),
      col((e) => e.reported),
      items.map((b) => b.id),
      col((e) => e.replaced_by),
    ],
  );
}

/**
 * The rows of the two tables written for every invoice travel as ONE JSON document (an array of objects
 * with short names) that PostgreSQL expands with json_to_recordset: one JSON.stringify instead of the
 * driver quoting each element of a dozen text arrays, which took most of the exporter's time.
 */
async function upsertRecords(
  client: pg.ClientBase,
  items: readonly { id: string; e: RecordEvent }[],
): Promise<void> {
  if (items.length === 0) return;
  const rows = items.map(({ id, e }) => {
    const { json, excerpt } = body(e.body);
    return {
      k: e.key,
      eid: clean(e.eid),
      st: e.status,
      http: e.http,
      cid: clean(e.cid),
      rs: clean(e.ruleset),
      n: e.attempts,
      f: e.first,
      l: e.last,
      err: clean(e.error),
      sby: e.by,
      bj: json,
      bx: excerpt,
      ev: id,
      tr: e.tr ?? null,
    };
  });
  await client.query(
    `INSERT INTO results (idempotency_key, external_id, status, http_status, correlation_id, ruleset_version,
                          attempts, first_attempt_at, last_attempt_at, error, superseded_by, response_body,
                          response_excerpt, event_id, trace_id, updated_at)
     SELECT k, eid, st, http, cid, rs, n, ${at("f")}, ${at("l")}, err, sby, bj::jsonb, bx, ev, tr, now()
       FROM json_to_recordset($1::json)
         AS u(k uuid, eid text, st text, http smallint, cid text, rs text, n int, f bigint, l bigint, err text,
              sby uuid, bj text, bx text, ev text, tr text)
     ON CONFLICT (idempotency_key) DO UPDATE SET
       external_id = EXCLUDED.external_id, status = EXCLUDED.status, http_status = EXCLUDED.http_status,
       correlation_id = EXCLUDED.correlation_id, ruleset_version = EXCLUDED.ruleset_version,
       attempts = EXCLUDED.attempts, first_attempt_at = EXCLUDED.first_attempt_at,
       last_attempt_at = EXCLUDED.last_attempt_at, error = EXCLUDED.error,
       superseded_by = EXCLUDED.superseded_by, response_body = EXCLUDED.response_body,
       response_excerpt = EXCLUDED.response_excerpt, event_id = EXCLUDED.event_id,
       trace_id = EXCLUDED.trace_id, updated_at = now()
     WHERE results.event_id IS NULL OR ${later("EXCLUDED.event_id", "results.event_id")}`,
    [JSON.stringify(rows)],
  );
}

async function insertAttempts(client: pg.ClientBase, items: readonly AttemptEvent[]): Promise<void> {
  if (items.length === 0) return;
  const rows = items.map((e) => ({
    k: e.key,
    n: e.n,
    s: e.at,
    d: Math.max(0, e.ms),
    http: e.http,
    // the schema wants an HTTP status or a network error for every attempt
    net: clean(e.http === null && e.net === null ? "no answer" : e.net),
    cid: clean(e.cid),
    ra: e.ra === null ? null : Math.max(0, e.ra),
  }));
  await client.query(
    `INSERT INTO attempts (idempotency_key, attempt, started_at, duration_ms, http_status, network_error,
                           correlation_id, retry_after_ms)
     SELECT k, n, ${at("s")}, d, http, net, cid, ra
       FROM json_to_recordset($1::json)
         AS u(k uuid, n int, s bigint, d int, http smallint, net text, cid text, ra bigint)
     ON CONFLICT (idempotency_key, attempt) DO NOTHING`,
    [JSON.stringify(rows)],
  );
}
