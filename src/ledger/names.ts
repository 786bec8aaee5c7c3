/**
 * The only place that names the ledger's Redis keys: every one is `{QUEUE_PREFIX}:relay:…`, so with a
 * hash-tagged prefix (`{invoice-relay}`) they share one Redis Cluster slot with BullMQ's queue keys.
 * Scripts never build a name; they get these in KEYS. Pure.
 *
 * Per idempotency key there is one Redis key, its record; everything else is one key per batch or one
 * key per deployment (see docs/ledger.md for what each holds).
 */
export class LedgerNames {
  readonly #base: string;

  constructor(prefix: string) {
    this.#base = `${prefix}:relay`;
  }

  /** String: the record of one idempotency key (JSON head, line break, answer body). */
  record(idempotencyKey: string): string {
    return `${this.#base}:r:${idempotencyKey}`;
  }

  /** Where records start: what SCAN matches with a `*` after it. */
  get recordStart(): string {
    return this.record("");
  }

  /** Hash: the batch's record (file, state, counts, report). */
  batch(batchId: string): string {
    return `${this.#base}:batch:${batchId}`;
  }

  /** Hash line → decision taken at ingest against other files (duplicate / conflict:<key>). */
  decisions(batchId: string): string {
    return `${this.#base}:batch:${batchId}:decisions`;
  }

  /** String: the idempotency keys the batch has, 16 bytes each (what retention removes with it). */
  batchKeyList(batchId: string): string {
    return `${this.#base}:batch:${batchId}:keys`;
  }

  /** The lease of the process ingesting the batch (src/ledger/batch-lease.ts). */
  ingestLease(batchId: string): string {
    return `${this.#base}:batch:${batchId}:lease`;
  }

  /**
   * String with a TTL (src/ledger/stuck-batches.ts): the batch was announced as stuck on the webhook;
   * set once (SET NX) so one process of all those watching sends the alert.
   */
  stuckNotice(batchId: string): string {
    return `${this.#base}:batch:${batchId}:stuck-notice`;
  }

  /** The lease of the process writing the batch's report. */
  reportLease(batchId: string): string {
    return `${this.#base}:batch:${batchId}:report-lease`;
  }

  /** Sorted set of batch ids by creation time. */
  get batches(): string {
    return `${this.#base}:batches`;
  }

  /** Hash batch → number of keys it still waits for (0 once all are final). */
  get pending(): string {
    return `${this.#base}:pending`;
  }

  /** Set of batches whose ingest is not finished: they cannot complete yet. */
  get ingesting(): string {
    return `${this.#base}:ingesting`;
  }

  /** Sorted set of batches complete and not reported yet, scored by when they completed. */
  get completed(): string {
    return `${this.#base}:completed`;
  }

  /**
   * Set of reported batches that wait again for a key `retry` or a re-drop requeued: their state reads
   * `ingested` until their report is written again (a batch only re-reported, as when a key of it is
   * superseded, is not in it).
   */
  get reopened(): string {
    return `${this.#base}:reopened`;
  }

  /** Hash external_id → the idempotency key that carries it now. */
  get externalIds(): string {
    return `${this.#base}:external-ids`;
  }

  /** Set of keys that ended failed (what `retry` re-drives). */
  get failed(): string {
    return `${this.#base}:failed`;
  }

  /**
   * Set of keys moved from failed back to queued whose job may not exist yet: a `retry` interrupted
   * between the two steps finds them here and finishes the job.
   */
  get requeuing(): string {
    return `${this.#base}:requeuing`;
  }

  /** Hash status → number of keys in it. */
  get counts(): string {
    return `${this.#base}:counts`;
  }

  /** The service refused the API key: why and when (JSON), until a run with a good key clears it. */
  get apiKeyRefused(): string {
    return `${this.#base}:key-refused`;
  }

  /**
   * Stream: the outbox, one entry per event (a field `e` of JSON) the exporter drains into the results
   * of record in PostgreSQL (docs/ledger.md); written only while `outboxOn` exists.
   */
  get outbox(): string {
    return `${this.#base}:outbox`;
  }

  /**
   * Stream: outbox events PostgreSQL refused as data (or that could not be read), kept aside with the
   * reason instead of being lost: `status` counts them; docs/results-of-record.md says how to look at them.
   */
  get outboxRefused(): string {
    return `${this.#base}:outbox-refused`;
  }

  /** String: the deployment exports to PostgreSQL, so the scripts write outbox events. */
  get outboxOn(): string {
    return `${this.#base}:outbox-on`;
  }

  /**
   * Hash: the fleet's send budget (src/ledger/send-budget.ts): the learned rate's state, when the next
   * request may go (GCRA), a hold from Retry-After, and what the fleet sent lately. Kept between passes:
   * the next night starts from the rate learned.
   */
  get sendBudget(): string {
    return `${this.#base}:send-budget`;
  }

  /**
   * Sorted set of pass ids (each `run`, each scan of `start`) by when the pass started
   * (src/ledger/passes.ts); a pass older than RESULTS_RETENTION is removed by the next pass written.
   */
  get passes(): string {
    return `${this.#base}:passes`;
  }

  /** Hash pass id → the pass's record (JSON: start, end, files, invoices by outcome, exit code…). */
  get passRecords(): string {
    return `${this.#base}:pass-records`;
  }

  /** Set of the passes that have not ended: a scan of `start` ends when its batches are finished. */
  get openPasses(): string {
    return `${this.#base}:open-passes`;
  }

  /**
   * Hash `run` pass id → `<ms> <host>:<pid>`: when its process last said it was alive (Redis's clock)
   * and which process it is (src/ledger/pass-lease.ts).
   */
  get passLeases(): string {
    return `${this.#base}:pass-leases`;
  }

  /**
   * Hash: what every process of the deployment counted of its requests since the deployment began
   * (src/ledger/fleet-counts.ts TOTAL_FIELDS, nothing else), for /metrics.
   */
  get fleetTotals(): string {
    return `${this.#base}:fleet-totals`;
  }

  /**
   * Hash: the fleet's answers per second during the UTC hour starting at `hourMs` (`a`, `r`, `o`), and
   * the learned rate and the sending rate sampled then (`l`, `s`), each followed by the second of the
   * hour: at most 5 × 3600 fields. Kept RESULTS_RETENTION after the hour; what a pass's chart is drawn
   * from (src/ledger/send-series.ts).
   */
  sendSeries(hourMs: number): string {
    const hour = new Date(hourMs).toISOString().slice(0, 13).replace(/-/g, "");
    return `${this.#base}:series:${hour}`;
  }

  /**
   * Hash remote path → the claim of an SFTP source's file in progress (JSON: batch id, size, mtime, step,
   * SHA-256), from before its download until it is moved or removed on the server (remote-claims.ts).
   */
  remoteClaims(source: string): string {
    return `${this.#base}:sftp:${source}:claims`;
  }

  /** Hash remote path → the size and mtime a poll last saw, and when (a file settles across two polls). */
  remoteSeen(source: string): string {
    return `${this.#base}:sftp:${source}:seen`;
  }

  /**
   * Hash SHA-256 → the batch that took that content from the source, under which name and when (JSON):
   * the same bytes again, under any name, are reported as such. Kept for RESULTS_RETENTION.
   */
  remoteContent(source: string): string {
    return `${this.#base}:sftp:${source}:content`;
  }

  /** Sorted set of the SHA-256s of `remoteContent`, scored by when each was taken: what retention reads. */
  remoteContentTimes(source: string): string {
    return `${this.#base}:sftp:${source}:content-times`;
  }

  /** Hash batch id → what is left to do on the server for it (archive the file, upload the results). */
  remoteBatches(source: string): string {
    return `${this.#base}:sftp:${source}:batches`;
  }

  /** The lease of the process polling the source (one at a time). */
  remoteLease(source: string): string {
    return `${this.#base}:sftp:${source}:lease`;
  }

  /** Hash source name → its last poll, files waiting, last error and backoff (JSON), for status. */
  get remoteSources(): string {
    return `${this.#base}:sftp-sources`;
  }
}
