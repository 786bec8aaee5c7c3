-- Up Migration
-- The lookups auditors and commands make: an invoice by its external_id; failures over a time range
-- (`--status failed --since …`); which batches had a key; the attempts of a key (the primary key).

CREATE INDEX results_external_id ON results (external_id);
CREATE INDEX results_status_last_attempt ON results (status, last_attempt_at);
CREATE INDEX batch_rows_key ON batch_rows (idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX batches_created_at ON batches (created_at);

-- Down Migration

DROP INDEX batches_created_at;
DROP INDEX batch_rows_key;
DROP INDEX results_status_last_attempt;
DROP INDEX results_external_id;
