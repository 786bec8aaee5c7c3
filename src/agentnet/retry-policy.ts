import type { BackoffPolicy } from "../submit/backoff.js";

/**
 * What to do after one attempt of POST /api/v1/auth/token. Pure: the client feeds it what happened.
 *
 * Only connection errors (including a response that never arrived in time), 5xx and 429 are retried.
 * `mayHaveIssuedKey` records whether the request may have reached the service and been acted on: the
 * request is not idempotent, so such a retry can leave a second developer key behind (see token-client.ts).
 */
export type AttemptVerdict =
  | { readonly action: "accept" }
  | { readonly action: "retry"; readonly reason: string; readonly mayHaveIssuedKey: boolean }
  | { readonly action: "fail"; readonly reason: string; readonly mayHaveIssuedKey: boolean };

export type RetryOrFail = Exclude<AttemptVerdict, { readonly action: "accept" }>;

export interface AgentnetRetryPolicy extends BackoffPolicy {
  /** Total attempts, the first included. */
  readonly maxAttempts: number;
}

export const DEFAULT_RETRY_POLICY: AgentnetRetryPolicy = {
  maxAttempts: 4,
  baseMs: 500,
  capMs: 8_000,
  retryAfterCapMs: 30_000,
};

export function judgeStatus(status: number): AttemptVerdict {
  if (status >= 200 && status < 300) return { action: "accept" };
  // 429 and 503 say "not now" before doing anything; other 5xx (a gateway timing out, a crash after the
  // key was written) give no such promise.
  if (status === 429) return { action: "retry", reason: "HTTP 429 (throttled)", mayHaveIssuedKey: false };
  if (status === 503) return { action: "retry", reason: "HTTP 503", mayHaveIssuedKey: false };
  if (status >= 500 && status < 600)
    return { action: "retry", reason: `HTTP ${status}`, mayHaveIssuedKey: true };
  return { action: "fail", reason: `HTTP ${status}`, mayHaveIssuedKey: false };
}

/** The request never left: safe to send again. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The connection broke or went quiet after the request may have been sent: the answer is lost. */
const ANSWER_LOST = new Set([
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
]);

/**
 * A thrown error from sending or reading. Anything not known as a connection error (an unknown host, a
 * TLS certificate problem, a bug) is final: retrying cannot fix it and would only risk more keys.
 */
export function judgeConnectionError(error: unknown): RetryOrFail {
  const code = errorCode(error);
  const reason = describeError(error, code);
  if (code !== undefined && NOT_SENT.has(code)) return { action: "retry", reason, mayHaveIssuedKey: false };
  if (code !== undefined && ANSWER_LOST.has(code)) return { action: "retry", reason, mayHaveIssuedKey: true };
  // The client's overall deadline (AbortSignal.timeout) fired: the request may well have been sent.
  if (error instanceof Error && error.name === "TimeoutError") {
    return { action: "retry", reason: "no answer within the request timeout", mayHaveIssuedKey: true };
  }
  return { action: "fail", reason, mayHaveIssuedKey: false };
}

/** The `code` of an error or of its cause (undici and net wrap errors); AggregateError from happy eyeballs too. */
function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const code: unknown = (current as Error & { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = current.cause ?? (current instanceof AggregateError ? current.errors[0] : undefined);
  }
  return undefined;
}

function describeError(error: unknown, code: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  const short = message.length > 160 ? `${message.slice(0, 160)}…` : message;
  if (code === undefined || short.includes(code)) return short === "" ? "unknown error" : short;
  return short === "" ? code : `${code}: ${short}`;
}
