-- Up Migration
-- The exporter drains the ledger's outbox (a Redis stream) into these tables. Each record and batch row
-- keeps the id of the stream entry it was last written from (`ms-seq`), so an older event, replayed or
-- exported late by another process, never overwrites a newer one. A batch row with no event id is a
-- placeholder: the batch's lines arrived before its own event, which fills it in.

ALTER TABLE results ADD COLUMN event_id text CHECK (event_id ~ '^[0-9]+-[0-9]+$');
ALTER TABLE batches ADD COLUMN event_id text CHECK (event_id ~ '^[0-9]+-[0-9]+$');

-- Down Migration

ALTER TABLE batches DROP COLUMN event_id;
ALTER TABLE results DROP COLUMN event_id;
