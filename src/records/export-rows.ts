import type pg from "pg";
import { clean, lastBy, later, laterId } from "./export-text.js";
import type { RowsEvent } from "./outbox-events.js";

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Locks the rows of the batches a read touches (by their own events or by their lines) before any other
 * write of the transaction, in one order for every process: two exporters then never wait for each other
 * in opposite orders, and one that exports a batch's lines sees what another committed for that batch.
 * A batch whose lines come before its own event gets a placeholder, which the event fills in (its
 * event_id is null, so any event of the batch overwrites it).
 */
export async function lockBatches(client: pg.ClientBase, batchIds: readonly string[]): Promise<void> {
  if (batchIds.length === 0) return;
  await client.query(
    `INSERT INTO batches (batch_id, file, format, created_at, state)
     SELECT b, '', 'csv', now(), 'ingesting' FROM unnest($1::text[]) AS u(b)
     ON CONFLICT (batch_id) DO UPDATE SET state = batches.state`,
    [[...new Set(batchIds)].sort(byText)],
  );
}

/**
 * Writes the lines of `rows` events under the rule of report generations (docs/ledger.md, "Outbox"): a
 * batch keeps the lines of the newest generation it has seen. A newer generation removes every line of
 * the older one first (a newer report may have fewer lines), then its events' lines are upserted by
 * (batch, line); an older generation's lines, however late, are not written. Several events of one
 * generation (a report over 1,000 lines) add up. The batches must be locked (lockBatches).
 */
export async function writeBatchRows(client: pg.ClientBase, events: readonly RowsEvent[]): Promise<void> {
  if (events.length === 0) return;
  const newest = new Map<string, string>();
  for (const e of events) {
    const seen = newest.get(e.batch);
    if (seen === undefined || laterId(e.report, seen)) newest.set(e.batch, e.report);
  }
  const generations = [...newest.entries()].sort(([a], [b]) => byText(a, b));
  const advanced = await client.query<{ batch_id: string }>(
    `UPDATE batches SET rows_report = u.g
       FROM unnest($1::text[], $2::text[]) AS u(b, g)
      WHERE batches.batch_id = u.b AND (batches.rows_report IS NULL OR ${later("u.g", "batches.rows_report")})
      RETURNING batches.batch_id`,
    [generations.map(([b]) => b), generations.map(([, g]) => g)],
  );
  if (advanced.rows.length > 0)
    await client.query("DELETE FROM batch_rows WHERE batch_id = ANY($1::text[])", [
      advanced.rows.map((r) => r.batch_id),
    ]);
  const items = lastBy(
    events
      .filter((e) => newest.get(e.batch) === e.report)
      .flatMap((e) => e.rows.map((row) => ({ batch: e.batch, report: e.report, row }))),
    (r) => `${r.batch}:${r.row[0]}`,
  );
  if (items.length === 0) return;
  const col = <T>(pick: (r: (typeof items)[number]) => T) => items.map(pick);
  // joined with the batch's generation as it stands now: lines of an older one find no batch to go with
  await client.query(
    `INSERT INTO batch_rows (batch_id, line, idempotency_key, decision, external_id, error, conflict_with)
     SELECT u.b, l, k, d, x, err, cw
       FROM unnest($1::text[], $2::text[], $3::int[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::uuid[])
         AS u(b, g, l, k, d, x, err, cw)
       JOIN batches ON batches.batch_id = u.b AND batches.rows_report = u.g
     ON CONFLICT (batch_id, line) DO UPDATE SET
       idempotency_key = EXCLUDED.idempotency_key, decision = EXCLUDED.decision,
       external_id = EXCLUDED.external_id, error = EXCLUDED.error, conflict_with = EXCLUDED.conflict_with`,
    [
      col((r) => r.batch),
      col((r) => r.report),
      col((r) => r.row[0]),
      col((r) => r.row[1]),
      col((r) => r.row[2]),
      col((r) => clean(r.row[3])),
      col((r) => clean(r.row[4])),
      col((r) => r.row[5]),
    ],
  );
}
