-- Up Migration
-- The id of the invoice's OpenTelemetry trace (docs/operations.md, "Traces"), carried by the outbox's
-- record events while tracing is on and the trace sampled; null otherwise.

ALTER TABLE results ADD COLUMN trace_id text CHECK (trace_id ~ '^[0-9a-f]{32}$');

-- Down Migration

ALTER TABLE results DROP COLUMN trace_id;
