-- Up Migration
-- A batch's lines in batch_rows are the rows of one report of it: the newest the exporter has seen. Each
-- report takes a generation when it is written (a stream id of the ledger's outbox, docs/ledger.md,
-- "Outbox"), carried by all of its `rows` events. Rows of a newer generation replace every row of an
-- older one, even lines the newer report lacks; rows of an older generation, exported late (by a process
-- that took over a dead exporter's events), change nothing. Null: no generation written yet.

ALTER TABLE batches ADD COLUMN rows_report text CHECK (rows_report ~ '^[0-9]+-[0-9]+$');

-- Down Migration

ALTER TABLE batches DROP COLUMN rows_report;
