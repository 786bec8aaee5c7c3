/** Names of the results store's Redis keys, all under `{QUEUE_PREFIX}:relay:`. Pure. */
export class RelayKeys {
  readonly base: string;

  constructor(prefix: string) {
    this.base = `${prefix}:relay`;
  }

  /** Hash: the result record of one idempotency key. */
  record(key: string): string {
    return `${this.base}:r:${key}`;
  }

  batch(batchId: string): string {
    return `${this.base}:batch:${batchId}`;
  }

  /** Hash line → decision taken at ingest against other files (duplicate / conflict). */
  decisions(batchId: string): string {
    return `${this.base}:batch:${batchId}:decisions`;
  }

  /** Sorted set of batch ids by creation time. */
  get batches(): string {
    return `${this.base}:batches`;
  }

  /** Set of batches whose rows are all final and whose report is not written yet. */
  get complete(): string {
    return `${this.base}:batches:complete`;
  }

  /** Set of keys that ended failed (what `retry` re-drives). */
  get failed(): string {
    return `${this.base}:failed`;
  }

  /**
   * Set of keys `retry` moved from failed back to queued whose job may not exist yet: a `retry`
   * interrupted between the two steps finds them here and finishes the job.
   */
  get requeuing(): string {
    return `${this.base}:requeuing`;
  }

  /** Hash status → number of keys in it. */
  get counts(): string {
    return `${this.base}:counts`;
  }

  /** The service refused the API key: why and when (JSON), until a run with a good key clears it. */
  get keyRefused(): string {
    return `${this.base}:key-refused`;
  }
}
