import { request, type Dispatcher } from "undici";
import type { Logger } from "../log/logger.js";
import { backoffDelay } from "../submit/backoff.js";
import { parseRetryAfter } from "../submit/retry-after.js";
import { agentnetEndpoint } from "./api-url.js";
import { AgentnetRefusedError } from "./errors/agentnet-refused-error.js";
import { AgentnetResponseInvalidError } from "./errors/agentnet-response-invalid-error.js";
import { AgentnetUnavailableError } from "./errors/agentnet-unavailable-error.js";
import { printable, redactCredentials } from "./printable.js";
import {
  DEFAULT_RETRY_POLICY,
  judgeConnectionError,
  judgeStatus,
  type AgentnetRetryPolicy,
  type RetryOrFail,
} from "./retry-policy.js";
import {
  parseTokenRequest,
  parseTokenResponse,
  type DeveloperKeyGrant,
  type TokenRequestInput,
} from "./token-schema.js";

/*
 * POST /api/v1/auth/token is not idempotent: every request that reaches the service may issue a new
 * developer key, and the spec shows no idempotency key for it. A retry after a lost answer (connection
 * reset, timeout, a 5xx from a gateway) can therefore leave a second key on the developer account that
 * nobody ever received. That key was never shown or stored anywhere, so it is not a leak; it is an unused
 * key. We still retry, because the user's only alternative is running the command again, which has the
 * same effect. The user recovers by using the key that was stored (the one answer that did arrive) and,
 * if the service offers a way to list or revoke keys, revoking the others: the spec shows no such way
 * (lifetime, revocation and rotation are not shown). The result says when this may have happened, so
 * the CLI can tell the user.
 */

export interface TokenClientOptions {
  /** Base URL of the agent memory network, already checked by parseAgentnetApiUrl. */
  readonly apiUrl: URL;
  readonly logger: Logger;
  /** undici dispatcher (Agent, Pool) to send through; the global one when absent. */
  readonly dispatcher?: Dispatcher;
  /** Deadline of one attempt, sending through reading the whole answer. */
  readonly timeoutMs?: number;
  readonly retry?: AgentnetRetryPolicy;
  /** Injected so tests can observe backoff delays without waiting them out. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly now?: () => number;
}

export interface DeveloperKeyResult {
  readonly grant: DeveloperKeyGrant;
  readonly attempts: number;
  /** An earlier attempt may have reached the service and lost its answer: another key may exist. */
  readonly otherKeyMayExist: boolean;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_SUCCESS_BODY_BYTES = 64 * 1024;
const MAX_ERROR_DETAIL_BYTES = 2 * 1024;

type Outcome =
  | {
      readonly kind: "answer";
      readonly status: number;
      readonly retryAfter: string | undefined;
      readonly text: string;
      readonly complete: boolean;
    }
  | { readonly kind: "no-answer"; readonly error: unknown };

/** Requests a developer key; validates the input first and the answer after. Never logs the key. */
export async function requestDeveloperKey(
  input: TokenRequestInput,
  options: TokenClientOptions,
): Promise<DeveloperKeyResult> {
  const body = JSON.stringify(parseTokenRequest(input));
  const url = agentnetEndpoint(options.apiUrl, "auth/token");
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: "agentnet", endpoint: url.href });
  let otherKeyMayExist = false;

  for (let attempt = 1; ; attempt++) {
    const outcome = await sendOnce(url, body, options);
    let verdict: RetryOrFail;
    if (outcome.kind === "answer") {
      const judged = judgeStatus(outcome.status);
      if (judged.action === "accept")
        return { grant: acceptAnswer(url, outcome), attempts: attempt, otherKeyMayExist };
      if (judged.action === "fail")
        throw new AgentnetRefusedError(url.href, outcome.status, printable(redactCredentials(outcome.text)));
      verdict = judged;
    } else {
      verdict = judgeConnectionError(outcome.error);
    }
    if (verdict.action === "fail" || attempt >= policy.maxAttempts) {
      throw new AgentnetUnavailableError(
        url.href,
        attempt,
        verdict.reason,
        otherKeyMayExist || verdict.mayHaveIssuedKey,
        outcome.kind === "no-answer" ? { cause: outcome.error } : undefined,
      );
    }

    otherKeyMayExist ||= verdict.mayHaveIssuedKey;
    const retryAfterMs = outcome.kind === "answer" ? parseRetryAfter(outcome.retryAfter, now()) : undefined;
    const delayMs = backoffDelay(policy, attempt, retryAfterMs, options.random);
    logger.warn(
      { attempt, reason: verdict.reason, delayMs, mayHaveIssuedKey: verdict.mayHaveIssuedKey },
      "developer key request failed; retrying",
    );
    await sleep(delayMs);
  }
}

async function sendOnce(url: URL, body: string, options: TokenClientOptions): Promise<Outcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    const response = await request(url, {
      method: "POST",
      // No Authorization header: the spec shows this request without one, and no other credential of
      // this process (the invoice key above all) may ever be sent to this service.
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    });
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    const { text, complete } = await readBounded(
      response.body,
      ok ? MAX_SUCCESS_BODY_BYTES : MAX_ERROR_DETAIL_BYTES,
    );
    const retryAfter = response.headers["retry-after"];
    return {
      kind: "answer",
      status: response.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      text,
      complete,
    };
  } catch (error) {
    return { kind: "no-answer", error };
  }
}

function acceptAnswer(url: URL, answer: Extract<Outcome, { kind: "answer" }>): DeveloperKeyGrant {
  const fail = (problem: string) => new AgentnetResponseInvalidError(url.href, answer.status, problem);
  if (!answer.complete) throw fail(`its body is larger than ${MAX_SUCCESS_BODY_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    throw fail("its body is not JSON");
  }
  const parsed = parseTokenResponse(json);
  if ("problems" in parsed) throw fail(`its body does not match the spec (${parsed.problems.join("; ")})`);
  return parsed;
}

/** Reads at most `limit` bytes; a larger body is cut off and the connection let go. */
async function readBounded(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number,
): Promise<{ text: string; complete: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > limit) {
      parts.push(chunk.subarray(0, limit - size));
      body.destroy();
      return { text: Buffer.concat(parts).toString("utf8"), complete: false };
    }
    parts.push(chunk);
    size += chunk.length;
  }
  return { text: Buffer.concat(parts).toString("utf8"), complete: true };
}
