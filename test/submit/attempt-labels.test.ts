import { describe, expect, it } from "vitest";
import type { Answer } from "../../src/submit/answer.js";
import { retryReason, statusClass } from "../../src/submit/attempt-labels.js";
import { classify } from "../../src/submit/classify.js";

const response = (status: number): Answer => ({ kind: "response", status, headers: {}, body: "" });
const rules = { correlationIdHeaders: [], correlationIdFields: [], rulesetVersionFields: [] };

describe("attempt labels for metrics", () => {
  it("when an answer comes back, then its class is its status's hundred, and no answer at all is network", () => {
    expect([200, 201, 301, 404, 429, 503].map((s) => statusClass(response(s)))).toEqual([
      "2xx",
      "2xx",
      "3xx",
      "4xx",
      "4xx",
      "5xx",
    ]);
    expect(statusClass({ kind: "no-response", reason: "timeout", message: "" })).toBe("network");
    expect(statusClass({ kind: "no-response", reason: "connection", message: "" })).toBe("network");
  });

  it("when an answer is retried, then its reason names why; answers not retried have none", () => {
    const reasons = Object.fromEntries(
      [201, 400, 401, 403, 404, 408, 409, 422, 425, 429, 500, 502, 503, 504].map((s) => [
        s,
        retryReason(response(s)),
      ]),
    );
    expect(reasons).toEqual({
      201: undefined,
      400: undefined,
      401: undefined,
      403: undefined,
      404: undefined,
      408: "timeout",
      409: "in_flight",
      422: undefined,
      425: "too_early",
      429: "throttled",
      500: "server_error",
      502: "server_error",
      503: "server_error",
      504: "server_error",
    });
    expect(retryReason({ kind: "no-response", reason: "timeout", message: "" })).toBe("timeout");
    expect(retryReason({ kind: "no-response", reason: "connection", message: "" })).toBe("network");
  });

  it("when classify retries an answer, then it has a reason, and only then", () => {
    const mismatched = [];
    for (let status = 100; status < 600; status++) {
      const retried = classify(response(status), rules, 0).kind === "retry";
      if (retried !== (retryReason(response(status)) !== undefined)) mismatched.push(status);
    }
    expect(mismatched).toEqual([]);
  });
});
