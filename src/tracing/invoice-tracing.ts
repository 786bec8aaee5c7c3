/**
 * The port through which the ingest, the queue and the submitter tell an invoice's trace
 * (docs/operations.md, "Traces"): one trace per invoice, begun when its job is created, carried in the
 * job's data to whichever process takes it, one span per attempt and one per POST. Absent (undefined)
 * wherever tracing is off, so the hot path pays one comparison.
 *
 * Only identifiers and outcomes are given: never an invoice's content, an answer's body or a credential.
 */
export interface InvoiceTracing {
  /** A chunk of jobs about to be added to the queue: their traces begin. */
  enqueue(jobs: readonly QueuedJob[]): EnqueueTrace;
  /** One attempt at a job, in the trace its data carries (a trace of its own when it carries none). */
  attempt(job: AttemptedJob): AttemptTrace;
}

export interface QueuedJob {
  /** The idempotency key: the job's id. */
  readonly key: string;
  readonly batch: string;
  readonly line: number;
}

export interface EnqueueTrace {
  /** Each job's traceparent, in the order given: what its data carries. */
  readonly traceparents: readonly string[];
  /** The jobs are in the queue, or `failed` says they may not be. */
  end(failed?: { readonly errorType: string }): void;
}

export interface AttemptedJob extends QueuedJob {
  /** Requests sent for this invoice before this attempt, by any process (src/queue/job-data.ts `sent`). */
  readonly sent: number;
  /** The traceparent the job's data carries; undefined for a job enqueued while tracing was off. */
  readonly traceparent: string | undefined;
}

/** Where the POST goes: parts of INVOICE_API_URL that hold no credential. */
export interface RequestTarget {
  /** Scheme, host, port and path: the URL without its user info. */
  readonly url: string;
  /** The path as a template of low cardinality (the same for every invoice). */
  readonly path: string;
  readonly host: string;
  readonly port: number;
}

/**
 * One attempt at an invoice. Its span begins at its first request (back-dated to when the attempt was
 * taken up), or at `end`: an attempt held back before sending (`heldBack`) is none and leaves no span.
 */
export interface AttemptTrace {
  /** The trace's id when it is sampled (exported): what the ledger keeps for the console and `results`. */
  readonly traceId: string | undefined;
  /** Requests this attempt has sent so far (one, or more when a refused key is tried again). */
  readonly requests: number;
  /** The POST begins: a span of its own, named in the request's `traceparent` header. */
  request(target: RequestTarget): RequestTrace;
  /** What the service's answer said of itself. */
  answered(answer: { readonly correlationId: string | undefined }): void;
  /** The attempt ended: `outcome` is what the worker made of it; `errorType` when it did not succeed. */
  end(outcome: string, errorType?: string): void;
  /** Nothing was sent, and the invoice goes back to the queue for another try: no span tells of it. */
  heldBack(): void;
}

export interface RequestTrace {
  /** The W3C `traceparent` header value the request carries. */
  readonly traceparent: string;
  /** The answer's status, or why no answer came (`timeout`, an error code). */
  end(result: { readonly status: number } | { readonly errorType: string }): void;
}

/** A process's tracing while it is on. */
export interface TracingHandle {
  readonly tracing: InvoiceTracing;
  /** Exports every span ended so far (tests). */
  flush(): Promise<void>;
  /**
   * Exports what is pending and stops. Never holds the process long: the last spans get a bounded time
   * (src/tracing/otel-sdk.ts), and the exporter's requests do not keep the process alive.
   */
  shutdown(): Promise<void>;
}
