import { describe, expect, it } from "vitest";
import type { Answer } from "../../src/submit/answer.js";
import { backoffDelay } from "../../src/submit/backoff.js";
import { classify } from "../../src/submit/classify.js";
import { DEFAULT_EXTRACTION_RULES } from "../../src/submit/extract.js";
import { FlowControl } from "../../src/submit/flow-control.js";
import { parseRetryAfter } from "../../src/submit/retry-after.js";

const NOW = Date.parse("2026-11-21T02:00:00Z");
const response = (status: number, body = "", headers: Record<string, string> = {}): Answer => ({
  kind: "response",
  status,
  headers,
  body,
});

describe("classifying the service's answer", () => {
  it("when the service answers 201, then the invoice succeeded with correlation ID and ruleset version", () => {
    const verdict = classify(
      response(201, JSON.stringify({ ruleset: { version: "rs-7" }, correlation_id: "body-id" }), {
        "x-request-id": "hdr-id",
      }),
      DEFAULT_EXTRACTION_RULES,
      NOW,
    );
    expect(verdict).toMatchObject({
      kind: "succeeded",
      httpStatus: 201,
      correlationId: "hdr-id",
      rulesetVersion: "rs-7",
    });
  });

  it("when no correlation header is present, then the body fields are used in order", () => {
    const verdict = classify(
      response(200, JSON.stringify({ requestId: "r2", request_id: "r1", version: 3 })),
      DEFAULT_EXTRACTION_RULES,
      NOW,
    );
    expect(verdict).toMatchObject({ correlationId: "r1", rulesetVersion: "3" });
  });

  it("when the lists are overridden, then the configured names are used", () => {
    const rules = {
      correlationIdHeaders: ["x-trace"],
      correlationIdFields: ["trace"],
      rulesetVersionFields: ["rules.v"],
    };
    const verdict = classify(
      response(201, JSON.stringify({ rules: { v: "9" } }), { "x-trace": "t-1", "x-request-id": "no" }),
      rules,
      NOW,
    );
    expect(verdict).toMatchObject({ correlationId: "t-1", rulesetVersion: "9" });
  });

  it.each([408, 409, 425, 429, 500, 502, 503, 504])(
    "when the service answers %i, then the invoice is retried",
    (status) => {
      expect(classify(response(status), DEFAULT_EXTRACTION_RULES, NOW).kind).toBe("retry");
    },
  );

  it.each([401, 403])("when the service answers %i, then the key is refused and nothing fails", (status) => {
    expect(classify(response(status), DEFAULT_EXTRACTION_RULES, NOW).kind).toBe("api-key-refused");
  });

  it("when the service refuses the key with a problem body, then the refusal carries the service's words, the status apart (not twice in a message)", () => {
    const body = JSON.stringify({ title: "invalid API key" });
    expect(classify(response(401, body), DEFAULT_EXTRACTION_RULES, NOW)).toMatchObject({
      kind: "api-key-refused",
      httpStatus: 401,
      detail: expect.not.stringContaining("401") as unknown,
    });
  });

  it.each([400, 404, 410, 422, 301, 302])(
    "when the service answers %i, then the invoice fails at once",
    (status) => {
      expect(classify(response(status), DEFAULT_EXTRACTION_RULES, NOW).kind).toBe("failed");
    },
  );

  it("when a 422 carries problem+json, then its title and detail are the error", () => {
    const body = JSON.stringify({
      type: "about:blank",
      title: "Invalid invoice",
      detail: "currency: unknown code",
    });
    expect(classify(response(422, body), DEFAULT_EXTRACTION_RULES, NOW)).toMatchObject({
      kind: "failed",
      detail: "HTTP 422: Invalid invoice: currency: unknown code",
    });
  });

  it("when no answer came (timeout, reset), then the invoice is retried", () => {
    const verdict = classify(
      { kind: "no-response", reason: "timeout", message: "headers timeout" },
      DEFAULT_EXTRACTION_RULES,
      NOW,
    );
    expect(verdict).toMatchObject({ kind: "retry", httpStatus: undefined });
  });

  it("when a 429 carries Retry-After in seconds or as an HTTP date, then it is read in ms", () => {
    expect(classify(response(429, "", { "retry-after": "2" }), DEFAULT_EXTRACTION_RULES, NOW)).toMatchObject({
      retryAfterMs: 2000,
    });
    const date = new Date(NOW + 7000).toUTCString();
    expect(classify(response(503, "", { "retry-after": date }), DEFAULT_EXTRACTION_RULES, NOW)).toMatchObject(
      { retryAfterMs: 7000 },
    );
  });
});

describe("Retry-After and backoff", () => {
  it("when Retry-After is a past date or garbage, then it is 0 or ignored", () => {
    expect(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfter("soon", NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  it("when Retry-After is a date from a service whose clock is 5 s ahead, then it is read against the answer's Date: the wait it meant", () => {
    const ahead = NOW + 5000; // the service's clock
    const headers = {
      "retry-after": new Date(ahead + 2000).toUTCString(),
      date: new Date(ahead).toUTCString(),
    };
    expect(classify(response(429, "", headers), DEFAULT_EXTRACTION_RULES, NOW)).toMatchObject({
      kind: "retry",
      retryAfterMs: 2000,
    });
    // without a readable Date, this machine's clock is all there is
    const undated = { "retry-after": headers["retry-after"], date: "yesterday" };
    expect(classify(response(429, "", undated), DEFAULT_EXTRACTION_RULES, NOW)).toMatchObject({
      retryAfterMs: 7000,
    });
  });

  it("when Retry-After is a decimal, a list or a bare number that is no date, then the seconds are read, never a date in 2001", () => {
    expect(parseRetryAfter("1.5", NOW)).toBe(1500);
    expect(parseRetryAfter(" 12, 13", NOW)).toBe(12_000);
    expect(parseRetryAfter("0.25,7", NOW)).toBe(250);
    expect(parseRetryAfter("120", NOW)).toBe(120_000);
    expect(parseRetryAfter("-1", NOW)).toBeUndefined();
    expect(parseRetryAfter("1.5.2", NOW)).toBeUndefined();
    const date = new Date(NOW + 9000).toUTCString();
    expect(parseRetryAfter(date, NOW)).toBe(9000);
    expect(parseRetryAfter(`${date}, ${new Date(NOW + 20_000).toUTCString()}`, NOW)).toBe(9000);
  });

  const policy = { baseMs: 1000, capMs: 300_000, retryAfterCapMs: 60_000 };

  it("when retries grow, then the jitter bound doubles up to the cap", () => {
    expect(backoffDelay(policy, 1, undefined, () => 0.999)).toBe(999);
    expect(backoffDelay(policy, 4, undefined, () => 0.5)).toBe(4000);
    expect(backoffDelay(policy, 30, undefined, () => 0.999)).toBe(299_700);
    expect(backoffDelay(policy, 3, undefined, () => 0)).toBe(0);
  });

  it("when the service sent Retry-After, then the delay is never shorter, but capped", () => {
    expect(backoffDelay(policy, 1, 2000, () => 0)).toBe(2000);
    expect(backoffDelay(policy, 1, 3_600_000, () => 0)).toBe(60_000);
  });
});

describe("flow control", () => {
  const options = { maxConcurrency: 32, outageThreshold: 3, coolDownBaseMs: 1000, coolDownCapMs: 8000 };

  it("when a worker starts, then one request is in flight, doubling with each success up to the maximum", () => {
    const flow = new FlowControl(options);
    const seen = [flow.concurrency];
    for (let i = 0; i < 7; i++) {
      flow.onSuccess();
      seen.push(flow.concurrency);
    }
    expect(seen).toEqual([1, 2, 4, 8, 16, 32, 32, 32]);
  });

  it("when retryable failures come in a row, then a growing cool-down is asked for and reset by a success", () => {
    const flow = new FlowControl(options);
    const coolDowns = Array.from({ length: 12 }, () => flow.onRetryable());
    expect(coolDowns.filter((c) => c !== undefined)).toEqual([1000, 2000, 4000, 8000]);
    expect(flow.concurrency).toBe(1);
    flow.onSuccess();
    expect([flow.onRetryable(), flow.onRetryable(), flow.onRetryable()]).toEqual([
      undefined,
      undefined,
      1000,
    ]);
  });
});
