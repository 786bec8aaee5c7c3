import { randomUUID } from "node:crypto";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { enqueueBatch, testConfig } from "../support/engine.js";
import { testInvoice } from "../support/invoices.js";
import { submissionFixture } from "../support/submission-fixture.js";
import type { SubmissionService } from "../../src/queue/submission-service.js";
import { inMemoryTracing, traceparentOf } from "./support.js";

const API_KEY = "irs_live_test_key_0123456789";
const { cleanups, simulator, worker, storeOf } = submissionFixture(API_KEY);

const attr = (span: ReadableSpan, name: string) => span.attributes[name];

describe("one invoice's trace", () => {
  it("when an invoice is refused twice and accepted at its third attempt, the first made by one process and the others by another, then it is one trace: its creation, three attempts linked to it, each with its POST", async () => {
    const sim = await simulator({ errorRate: 1 });
    let answered = 0;
    sim.events.on("attempt", () => {
      if (++answered === 2) sim.setFaults({ errorRate: 0 });
    });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `traced-${randomUUID()}`);
    const first = inMemoryTracing(cleanups);
    const second = inMemoryTracing(cleanups);

    // The first process ingests the invoice and makes its first attempt, then stops taking work.
    await enqueueBatch(config, "b1", [inv], first.handle.tracing);
    const stopped: { first?: Promise<void> | undefined; service?: SubmissionService } = {};
    const firstAttempt = new Promise<void>((resolve) => {
      void worker(config, {
        tracing: first.handle.tracing,
        onOutcome: () => {
          stopped.first ??= stopped.service?.close(1000);
          resolve();
        },
      }).then((w) => (stopped.service = w.service));
    });
    await firstAttempt;
    await stopped.first;
    // The second process takes the job from Redis and finishes it.
    const w = await worker(config, { tracing: second.handle.tracing });
    await w.untilFinal(1);

    const spans = [...(await first.spans()), ...(await second.spans())];
    const create = spans.find((s) => s.name === "create invoices");
    expect(create?.kind).toBe(SpanKind.PRODUCER);
    expect(create?.parentSpanContext).toBeUndefined();
    const traceId = create?.spanContext().traceId;
    const traced = spans.filter((s) => s.spanContext().traceId === traceId);
    // The first process may take the job again while it closes (full jitter can make the retry due at
    // once); its pacer hands it back unsent, which is no attempt and leaves no span.
    expect(traced.filter((s) => attr(s, "invoice_relay.outcome") === "held-back")).toEqual([]);
    const trace = traced;
    expect(trace.map((s) => s.name).sort()).toEqual([
      "POST /api/v1/invoices",
      "POST /api/v1/invoices",
      "POST /api/v1/invoices",
      "create invoices",
      "process invoices",
      "process invoices",
      "process invoices",
    ]);
    expect(create?.attributes).toMatchObject({
      "messaging.system": "bullmq",
      "messaging.operation.type": "create",
      "messaging.destination.name": "invoices",
      "messaging.message.id": inv.key,
      "invoice_relay.idempotency_key": inv.key,
      "invoice_relay.batch_id": "b1",
      "invoice_relay.line": 2,
    });

    // The batch's send links each job's creation context.
    const send = spans.find((s) => s.name === "send invoices");
    expect(send?.kind).toBe(SpanKind.CLIENT);
    expect(send?.spanContext().traceId).not.toBe(traceId);
    expect(send?.links.map((l) => l.context.spanId)).toEqual([create?.spanContext().spanId]);

    // Each attempt: a child of the creation context, linked to it, in the process that made it.
    const processes = trace
      .filter((s) => s.name === "process invoices")
      .sort((a, b) => Number(attr(a, "invoice_relay.attempt")) - Number(attr(b, "invoice_relay.attempt")));
    expect(
      processes.map((s) => [attr(s, "invoice_relay.attempt"), attr(s, "invoice_relay.outcome")]),
    ).toEqual([
      [1, "retry"],
      [2, "retry"],
      [3, "succeeded"],
    ]);
    expect((await first.spans()).filter((s) => s.name === "process invoices")).toHaveLength(1);
    for (const p of processes) {
      expect(p.kind).toBe(SpanKind.CONSUMER);
      expect(p.parentSpanContext?.spanId).toBe(create?.spanContext().spanId);
      expect(p.links.map((l) => l.context.spanId)).toEqual([create?.spanContext().spanId]);
      expect(p.attributes).toMatchObject({
        "messaging.operation.type": "process",
        "invoice_relay.idempotency_key": inv.key,
        "invoice_relay.batch_id": "b1",
      });
    }
    expect(processes.map((p) => p.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);

    // Each POST: a client span of its attempt, named in the traceparent the service received.
    const record = await storeOf(config).get(inv.key);
    expect(record).toMatchObject({ status: "succeeded", attempts: 3, trace_id: traceId });
    expect(attr(processes[2] as ReadableSpan, "invoice_relay.correlation_id")).toBe(record?.correlation_id);
    const posts = processes.map((p) => {
      const post = trace.filter((s) => s.parentSpanContext?.spanId === p.spanContext().spanId);
      expect(post).toHaveLength(1);
      return post[0] as ReadableSpan;
    });
    expect(
      posts.map((p) => [p.kind, attr(p, "http.response.status_code"), attr(p, "http.request.resend_count")]),
    ).toEqual([
      [SpanKind.CLIENT, 503, undefined],
      [SpanKind.CLIENT, 503, 1],
      [SpanKind.CLIENT, 201, 2],
    ]);
    expect(posts[0]?.attributes).toMatchObject({
      "http.request.method": "POST",
      "url.full": `${sim.url}/api/v1/invoices`,
      "server.address": "127.0.0.1",
      "error.type": "503",
    });
    expect(sim.attempts(inv.key).map((a) => a.traceparent)).toEqual(posts.map(traceparentOf));
  });

  it("when tracing is off, then the jobs carry no trace, the POSTs no traceparent and the ledger no trace id", async () => {
    const sim = await simulator();
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `untraced-${randomUUID()}`);
    await enqueueBatch(config, "b1", [inv]);
    const w = await worker(config);
    await w.untilFinal(1);

    expect(sim.attempts(inv.key).map((a) => a.traceparent)).toEqual([undefined]);
    const record = await storeOf(config).get(inv.key);
    expect(record?.status).toBe("succeeded");
    expect(record?.trace_id).toBeUndefined();
  });
});
