-- Up Migration
-- The results of record: what was dropped, what each idempotency key came to, every HTTP attempt, and
-- which key each line of each file became. Money-grade types: timestamptz, integers, no floats.

CREATE TABLE batches (
  batch_id     text PRIMARY KEY,
  file         text NOT NULL,
  format       text NOT NULL CHECK (format IN ('csv', 'json', 'ndjson')),
  size_bytes   bigint CHECK (size_bytes >= 0),
  sha256       text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  dropped_at   timestamptz,
  created_at   timestamptz NOT NULL,
  state        text NOT NULL CHECK (state IN ('ingesting', 'ingested', 'rejected', 'reported', 'changed')),
  rows         integer CHECK (rows >= 0),
  valid_rows   integer CHECK (valid_rows >= 0),
  -- Rows per report status (succeeded, duplicate, rejected, failed, conflict, superseded, pending).
  counts       jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(counts) = 'object'),
  report_csv   text,
  summary_json text,
  profile      text,
  file_error   text,
  reported_at  timestamptz,
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE results (
  idempotency_key  uuid PRIMARY KEY,
  external_id      text NOT NULL,
  status           text NOT NULL
    CHECK (status IN ('queued', 'retrying', 'succeeded', 'failed', 'superseded')),
  http_status      smallint CHECK (http_status BETWEEN 100 AND 599),
  correlation_id   text,
  ruleset_version  text,
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  first_attempt_at timestamptz,
  last_attempt_at  timestamptz,
  error            text,
  superseded_by    uuid,
  -- The service's answer: as jsonb when it parsed as JSON within the bound, else a text excerpt.
  response_body    jsonb,
  response_excerpt text,
  updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE attempts (
  idempotency_key uuid NOT NULL,
  attempt         integer NOT NULL CHECK (attempt >= 1),
  started_at      timestamptz NOT NULL,
  duration_ms     integer NOT NULL CHECK (duration_ms >= 0),
  http_status     smallint CHECK (http_status BETWEEN 100 AND 599),
  network_error   text,
  correlation_id  text,
  retry_after_ms  bigint CHECK (retry_after_ms >= 0),
  PRIMARY KEY (idempotency_key, attempt),
  CHECK (http_status IS NOT NULL OR network_error IS NOT NULL)
);

CREATE TABLE batch_rows (
  batch_id        text NOT NULL REFERENCES batches (batch_id),
  line            integer NOT NULL CHECK (line >= 1),
  -- Null for a rejected row: it never got a key.
  idempotency_key uuid,
  -- What registering the row decided (docs/ledger.md, "Words"); for a row registered before a crash,
  -- the key's status then.
  decision        text NOT NULL CHECK (decision IN ('new', 'requeue', 'join', 'duplicate', 'conflict',
    'rejected', 'queued', 'retrying', 'succeeded', 'failed', 'superseded')),
  -- For a conflict: the key of the other version that stood in its way.
  conflict_with   uuid,
  external_id     text,
  error           text,
  PRIMARY KEY (batch_id, line),
  CHECK ((decision = 'rejected') = (idempotency_key IS NULL))
);

-- Down Migration

DROP TABLE batch_rows;
DROP TABLE attempts;
DROP TABLE results;
DROP TABLE batches;
