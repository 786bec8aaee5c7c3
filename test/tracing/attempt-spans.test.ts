import { randomUUID } from "node:crypto";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { enqueueBatch, testConfig } from "../support/engine.js";
import { testInvoice, testInvoices } from "../support/invoices.js";
import { submissionFixture } from "../support/submission-fixture.js";
import { inMemoryTracing } from "./support.js";

const API_KEY = "irs_live_test_key_0123456789";
const { cleanups, simulator, worker } = submissionFixture(API_KEY);

const attr = (span: ReadableSpan, name: string) => span.attributes[name];
const PROCESS = "process invoices";
const POST = "POST /api/v1/invoices";

/** Each attempt span of `spans` with the POST spans under it. */
function attemptsOf(spans: readonly ReadableSpan[]) {
  return spans
    .filter((s) => s.name === PROCESS)
    .map((attempt) => ({
      attempt,
      posts: spans.filter(
        (s) => s.name === POST && s.parentSpanContext?.spanId === attempt.spanContext().spanId,
      ),
    }));
}

describe("the spans of an invoice's attempts", () => {
  it("when the service answers 429, then 503, then 201, then the attempts are numbered 1, 2, 3 and the POSTs count 0, 1 and 2 resends", async () => {
    const sim = await simulator({ throttleRate: 1, retryAfterSeconds: 0 });
    let answered = 0;
    sim.events.on("attempt", () => {
      answered++;
      if (answered === 1) sim.setFaults({ throttleRate: 0, errorRate: 1 });
      if (answered === 2) sim.setFaults({ errorRate: 0 });
    });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY });
    const inv = testInvoice(1, `resent-${randomUUID()}`);
    const tracing = inMemoryTracing(cleanups);
    await enqueueBatch(config, "b1", [inv], tracing.handle.tracing);
    const w = await worker(config, { tracing: tracing.handle.tracing });
    await w.untilFinal(1);

    expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([429, 503, 201]);
    const attempts = attemptsOf(await tracing.spans()).sort(
      (a, b) =>
        Number(attr(a.attempt, "invoice_relay.attempt")) - Number(attr(b.attempt, "invoice_relay.attempt")),
    );
    expect(
      attempts.map(({ attempt, posts }) => [
        attr(attempt, "invoice_relay.attempt"),
        attr(attempt, "invoice_relay.outcome"),
        posts.map((p) => [attr(p, "http.response.status_code"), attr(p, "http.request.resend_count")]),
      ]),
    ).toEqual([
      [1, "throttled", [[429, undefined]]],
      [2, "retry", [[503, 1]]],
      [3, "succeeded", [[201, 2]]],
    ]);
  });

  it("when a cool-down hands invoices in hand back unsent, then they leave no attempt span: every attempt span has its POST, and no invoice repeats an attempt number", async () => {
    const sim = await simulator({ errorRate: 1 });
    let answered = 0;
    sim.events.on("attempt", () => {
      if (++answered === 4) sim.setFaults({ errorRate: 0 });
    });
    const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, env: { SUBMIT_CONCURRENCY: "2" } });
    const invoices = testInvoices(12, `held-${randomUUID()}`);
    const tracing = inMemoryTracing(cleanups);
    await enqueueBatch(config, "b1", invoices, tracing.handle.tracing);
    // Every outage answer begins a short cool-down, which hands back the invoices waiting for a request slot.
    const w = await worker(config, {
      tracing: tracing.handle.tracing,
      flow: { outageThreshold: 1, coolDownBaseMs: 100, coolDownCapMs: 100 },
    });
    await w.untilFinal(invoices.length);

    const attempts = attemptsOf(await tracing.spans());
    const sent = invoices.reduce((n, inv) => n + sim.attempts(inv.key).length, 0);
    expect(attempts.filter(({ posts }) => posts.length !== 1)).toEqual([]);
    expect(attempts).toHaveLength(sent);
    const numbers = attempts.map(
      ({ attempt }) =>
        `${String(attr(attempt, "invoice_relay.idempotency_key"))}#${String(attr(attempt, "invoice_relay.attempt"))}`,
    );
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
