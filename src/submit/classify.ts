import type { Answer } from "./answer.js";
import { extractCorrelationId, extractRulesetVersion, type ExtractionRules } from "./extract.js";
import { retryAfterOf } from "./retry-after.js";

/** What to do with an invoice after one attempt, per the table of docs/submission.md, "What happens to each answer". */
export type Verdict =
  | {
      readonly kind: "succeeded";
      readonly httpStatus: number;
      readonly correlationId: string | undefined;
      readonly rulesetVersion: string | undefined;
      readonly body: string;
    }
  | {
      readonly kind: "retry";
      readonly httpStatus: number | undefined;
      readonly retryAfterMs: number | undefined;
      readonly detail: string;
      /** Why no HTTP answer came back; undefined when one did. */
      readonly networkError?: string | undefined;
      readonly correlationId?: string | undefined;
    }
  /** 401/403: the API key is refused. Stop submitting; mark nothing failed. */
  | {
      readonly kind: "api-key-refused";
      readonly httpStatus: number;
      readonly detail: string;
      readonly correlationId?: string | undefined;
    }
  | {
      readonly kind: "failed";
      readonly httpStatus: number;
      readonly correlationId: string | undefined;
      readonly detail: string;
    };

const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const MAX_DETAIL_CHARS = 500;

/**
 * The service said "not now": a 429, or a 503 with Retry-After (a service shedding load says when to
 * come back, as a 429 does; a 503 without one is an outage). Neither spends an attempt (docs/capacity.md).
 */
export function refusedForCapacity(
  httpStatus: number | undefined,
  retryAfterMs: number | undefined,
): boolean {
  return httpStatus === 429 || (httpStatus === 503 && retryAfterMs !== undefined);
}

export function classify(answer: Answer, rules: ExtractionRules, now: number): Verdict {
  if (answer.kind === "no-response") {
    const detail = `${answer.reason}: ${answer.message}`;
    return { kind: "retry", httpStatus: undefined, retryAfterMs: undefined, detail, networkError: detail };
  }
  const { status, headers, body } = answer;
  const json = parseJson(body);
  if (status >= 200 && status < 300) {
    return {
      kind: "succeeded",
      httpStatus: status,
      correlationId: extractCorrelationId(rules, headers, json),
      rulesetVersion: extractRulesetVersion(rules, json),
      body,
    };
  }
  const detail = `HTTP ${status}: ${describeError(json, body)}`;
  if (RETRYABLE.has(status)) {
    const retryAfter = retryAfterOf(headers, now);
    const correlationId = extractCorrelationId(rules, headers, json);
    return { kind: "retry", httpStatus: status, retryAfterMs: retryAfter, detail, correlationId };
  }
  if (status === 401 || status === 403) {
    const correlationId = extractCorrelationId(rules, headers, json);
    // The service's words alone: whatever shows them shows the status beside them.
    return { kind: "api-key-refused", httpStatus: status, detail: describeError(json, body), correlationId };
  }
  return {
    kind: "failed",
    httpStatus: status,
    correlationId: extractCorrelationId(rules, headers, json),
    detail,
  };
}

function parseJson(body: string): unknown {
  if (body === "") return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** The service's own words: problem+json title/detail (RFC 9457), a message field, or the raw text. */
function describeError(json: unknown, body: string): string {
  let text = body.trim();
  if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    const record = json as Record<string, unknown>;
    const parts = [record["title"], record["detail"], record["message"], record["error"]].filter(
      (v): v is string => typeof v === "string" && v.trim() !== "",
    );
    if (parts.length > 0) text = parts.join(": ");
  }
  if (text === "") text = "(no body)";
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}
