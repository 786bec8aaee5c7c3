import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from "@opentelemetry/api";
import type {
  AttemptedJob,
  AttemptTrace,
  EnqueueTrace,
  InvoiceTracing,
  QueuedJob,
  RequestTarget,
  RequestTrace,
} from "./invoice-tracing.js";
import { MESSAGING_SYSTEM } from "./span-names.js";
import { formatTraceparent, parseTraceparent } from "./trace-context.js";

/**
 * The invoice's trace told with an OpenTelemetry tracer. Every span is started with its parent given
 * outright, never from an "active" context: the relay registers no context manager, so Node's async
 * hooks stay off and nothing else in the process pays for tracing.
 *
 * - `create {queue}` (PRODUCER): one per job, the root of the invoice's trace; its context is the job's
 *   creation context, carried in the job's data;
 * - `send {queue}` (CLIENT): one per `addBulk`, linking the jobs' creation contexts;
 * - `process {queue}` (CONSUMER): one per attempt, child of the creation context (a single-message
 *   consumer, as the messaging conventions allow) and linked to it; none for an attempt held back unsent;
 * - `POST {path}` (CLIENT): the attempt's request, child of its `process` span; its context is the
 *   request's `traceparent`.
 */
export class OtelInvoiceTracing implements InvoiceTracing {
  readonly #names: { readonly create: string; readonly send: string; readonly process: string };

  constructor(
    private readonly tracer: Tracer,
    /** The queue's name: the messaging destination. */
    private readonly queue: string,
  ) {
    this.#names = { create: `create ${queue}`, send: `send ${queue}`, process: `process ${queue}` };
  }

  enqueue(jobs: readonly QueuedJob[]): EnqueueTrace {
    const creates = jobs.map((job) =>
      this.tracer.startSpan(
        this.#names.create,
        { kind: SpanKind.PRODUCER, attributes: messageAttributes("create", this.queue, job) },
        ROOT_CONTEXT,
      ),
    );
    const send = this.tracer.startSpan(
      this.#names.send,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "messaging.system": MESSAGING_SYSTEM,
          "messaging.operation.type": "send",
          "messaging.operation.name": "send",
          "messaging.destination.name": this.queue,
          "messaging.batch.message_count": jobs.length,
        },
        links: creates.map((span) => ({ context: span.spanContext() })),
      },
      ROOT_CONTEXT,
    );
    return {
      traceparents: creates.map((span) => traceparentOf(span.spanContext())),
      end: (failed) => {
        for (const span of [...creates, send]) {
          if (failed !== undefined) fail(span, failed.errorType);
          span.end();
        }
      },
    };
  }

  attempt(job: AttemptedJob): AttemptTrace {
    const creation = job.traceparent === undefined ? undefined : remoteContext(job.traceparent);
    const attributes = messageAttributes("process", this.queue, job);
    attributes["invoice_relay.attempt"] = job.sent + 1;
    const begin = (startTime: number): Span =>
      this.tracer.startSpan(
        this.#names.process,
        {
          kind: SpanKind.CONSUMER,
          attributes,
          links: creation === undefined ? [] : [{ context: creation }],
          startTime,
        },
        creation === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, creation),
      );
    return new OtelAttemptTrace(this.tracer, begin, job.sent, creation);
  }
}

/**
 * An attempt whose `process` span is started only once it sends (or ends without being held back), with
 * the time it was taken up: an attempt the pacer or a cool-down hands back unsent was no attempt.
 */
class OtelAttemptTrace implements AttemptTrace {
  readonly #takenAt = Date.now();
  #span: Span | undefined;
  #context: Context | undefined;
  #requests = 0;

  constructor(
    private readonly tracer: Tracer,
    private readonly begin: (startTime: number) => Span,
    /** Requests sent for the invoice before this attempt. */
    private readonly sentBefore: number,
    private readonly creation: SpanContext | undefined,
  ) {}

  get traceId(): string | undefined {
    const context = this.#span?.spanContext() ?? this.creation;
    return context !== undefined && isSampled(context) ? context.traceId : undefined;
  }

  get requests(): number {
    return this.#requests;
  }

  request(target: RequestTarget): RequestTrace {
    const attributes: Attributes = {
      "http.request.method": "POST",
      "url.full": target.url,
      "url.template": target.path,
      "server.address": target.host,
      "server.port": target.port,
    };
    // The conventions count resends, for any reason: the invoice's first request is none.
    const resends = this.sentBefore + this.#requests++;
    if (resends > 0) attributes["http.request.resend_count"] = resends;
    this.#open();
    const span = this.tracer.startSpan(
      `POST ${target.path}`,
      { kind: SpanKind.CLIENT, attributes },
      this.#context,
    );
    return {
      traceparent: traceparentOf(span.spanContext()),
      end: (result) => {
        if ("status" in result) {
          span.setAttribute("http.response.status_code", result.status);
          // A client span is in error from 400 on (the HTTP conventions); error.type is the status.
          if (result.status >= 400) fail(span, String(result.status));
        } else fail(span, result.errorType);
        span.end();
      },
    };
  }

  answered(answer: { readonly correlationId: string | undefined }): void {
    if (answer.correlationId !== undefined)
      this.#open().setAttribute("invoice_relay.correlation_id", answer.correlationId);
  }

  end(outcome: string, errorType?: string): void {
    const span = this.#open();
    span.setAttribute("invoice_relay.outcome", outcome);
    if (errorType !== undefined) fail(span, errorType);
    span.end();
  }

  heldBack(): void {
    // Held back before its first request, so nothing was started; should it have sent, it ends as sent.
    if (this.#span !== undefined) this.end("held-back");
  }

  #open(): Span {
    if (this.#span === undefined) {
      this.#span = this.begin(this.#takenAt);
      this.#context = trace.setSpan(ROOT_CONTEXT, this.#span);
    }
    return this.#span;
  }
}

/** One job's attributes: the messaging conventions' and the relay's own (one literal: spans are made per invoice). */
function messageAttributes(operation: "create" | "process", queue: string, job: QueuedJob): Attributes {
  return {
    "messaging.system": MESSAGING_SYSTEM,
    "messaging.operation.type": operation,
    "messaging.operation.name": operation,
    "messaging.destination.name": queue,
    "messaging.message.id": job.key,
    "invoice_relay.idempotency_key": job.key,
    "invoice_relay.batch_id": job.batch,
    "invoice_relay.line": job.line,
  };
}

/** Marks a span as failed with a class of error only: no message, which could carry an answer's text. */
function fail(span: Span, errorType: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

function isSampled(context: SpanContext): boolean {
  return (context.traceFlags & TraceFlags.SAMPLED) !== 0;
}

function traceparentOf(context: SpanContext): string {
  return formatTraceparent({ traceId: context.traceId, spanId: context.spanId, sampled: isSampled(context) });
}

/** The creation context a job's data carries, as the parent of a span in this process. */
function remoteContext(traceparent: string): SpanContext | undefined {
  const parsed = parseTraceparent(traceparent);
  if (parsed === undefined) return undefined;
  return {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: parsed.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  };
}
