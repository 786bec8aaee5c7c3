import { EventEmitter } from "node:events";
import { Pool } from "undici";
import { coerceError } from "../errors/relay-error.js";
import { RequestHeldBackError } from "./errors/request-held-back-error.js";
import type { AttemptTrace, RequestTarget } from "../tracing/invoice-tracing.js";
import type { Answer } from "./answer.js";
import { judgedKey, KeyInUse, type ApiKeySource } from "./key-in-use.js";
import { redactSecret, redactSecretInHeaders } from "./redact-secret.js";
import type { Submitter } from "./submitter.js";

export interface HttpSubmitterOptions {
  /** Base URL of the service; invoices go to {baseUrl}/api/v1/invoices. */
  readonly baseUrl: string;
  /** The key, or the key as it is now when it is read again from a file (src/config/live-secret.ts). */
  readonly apiKey: string | ApiKeySource;
  /** Keep-alive connections: one per request in flight. */
  readonly connections: number;
  readonly requestTimeoutMs: number;
  readonly responseBodyMaxBytes: number;
  /**
   * The service refused the key the file holds now (`httpStatus`) and the key it took before is kept
   * (src/submit/key-in-use.ts): called once per refused value.
   */
  readonly onKeyKept?: (httpStatus: number) => void;
  /**
   * Counts a request before it goes (the fleet's totals, src/ledger/sent-count.ts), awaited: a request
   * is never sent uncounted. When the count fails the request is not sent (RequestHeldBackError).
   */
  readonly counting?: () => Promise<void>;
}

export type { ApiKeySource } from "./key-in-use.js";

const INVOICES_PATH = "/api/v1/invoices";
const USER_AGENT = "invoice-relay/0.1";

/** POSTs canonical invoices with undici over a keep-alive pool sized to the worker's concurrency. */
export class HttpSubmitter implements Submitter {
  private readonly pool: Pool;
  private readonly path: string;
  /** What a request's span says of where it went: no user info (a URL may carry credentials). */
  private readonly target: RequestTarget;
  readonly #key: KeyInUse;
  /** Every key sent so far: an answer echoing any of them has it redacted. */
  readonly #keysSent = new Set<string>();

  constructor(private readonly options: HttpSubmitterOptions) {
    const url = new URL(options.baseUrl);
    this.path = `${url.pathname.replace(/\/+$/, "")}${INVOICES_PATH}`;
    this.target = {
      url: `${url.origin}${this.path}`,
      path: this.path,
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
    };
    const key = options.apiKey;
    const source: ApiKeySource =
      typeof key === "string" ? { current: () => key, refresh: () => Promise.resolve(key) } : key;
    this.#key = new KeyInUse(source, options.onKeyKept);
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(options.requestTimeoutMs, 10_000),
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
    });
  }

  /**
   * Sends with the key in use. When the service refuses it (401/403), the same request (same
   * idempotency key) is sent once more with each other key worth trying: the file's value read again
   * (a key rotated since), or the key the service took before when the file's value is the one refused
   * (src/submit/key-in-use.ts). Only when none is left does the refusal go on to pause submission.
   */
  async submit(idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer> {
    let key = this.#key.current();
    const tried = new Set([key]);
    for (;;) {
      const answer = await this.#send(key, idempotencyKey, body, trace);
      const judged = answer.kind === "response" ? judgedKey(answer.status) : "unknown";
      if (judged === "accepted") this.#key.accepted(key);
      const next =
        judged === "refused" && answer.kind === "response"
          ? await this.#key.refused(key, answer.status)
          : undefined;
      if (next === undefined || tried.has(next))
        // Each key tried before this one was refused: those answers are counted with this one.
        return tried.size === 1 ? answer : { ...answer, keyRefusedBefore: tried.size - 1 };
      tried.add(next);
      key = next;
    }
  }

  async #send(apiKey: string, idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer> {
    if (this.options.counting !== undefined)
      await this.options.counting().catch((error: unknown) => {
        throw new RequestHeldBackError(`it could not be counted: ${coerceError(error).message}`);
      });
    this.#keysSent.add(apiKey);
    // One deadline for headers and body: a timer cleared on completion (AbortSignal.timeout's timer
    // would outlive every request by the whole timeout), firing an EventEmitter, which undici accepts
    // as a signal. An AbortController (an EventTarget, its listener added and removed per request)
    // cost about 10 µs more per request, measured: a sixth of the worker's own share per invoice.
    const deadline = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.emit("abort");
    }, this.options.requestTimeoutMs);
    const headers: Record<string, string> = {
      authorization: `Bearer ${apiKey}`,
      "idempotency-key": idempotencyKey,
      "content-type": "application/json",
      accept: "application/json, application/problem+json",
      "user-agent": USER_AGENT,
    };
    const traced = trace?.request(this.target);
    if (traced !== undefined) headers["traceparent"] = traced.traceparent;
    try {
      const response = await this.pool.request({
        method: "POST",
        path: this.path,
        headers,
        body,
        signal: deadline,
      });
      const text = await readBounded(response.body, this.options.responseBodyMaxBytes);
      traced?.end({ status: response.statusCode });
      // Should the service echo the key, it must not travel on into the ledger, reports or messages.
      let answered: Readonly<Record<string, string | readonly string[] | undefined>> = response.headers;
      let redacted = text;
      for (const sent of this.#keysSent) {
        answered = redactSecretInHeaders(answered, sent);
        redacted = redactSecret(redacted, sent);
      }
      return { kind: "response", status: response.statusCode, headers: answered, body: redacted };
    } catch (thrown) {
      if (timedOut) {
        traced?.end({ errorType: "timeout" });
        const message = `no complete answer within ${this.options.requestTimeoutMs} ms`;
        return { kind: "no-response", reason: "timeout", message };
      }
      const error = coerceError(thrown);
      const code = (error as { code?: unknown }).code;
      const timeout = error.name === "TimeoutError" || (typeof code === "string" && /TIMEOUT/.test(code));
      traced?.end({ errorType: timeout ? "timeout" : typeof code === "string" ? code : error.name });
      return { kind: "no-response", reason: timeout ? "timeout" : "connection", message: describe(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(abandon = false): Promise<void> {
    // close() waits for the requests in flight, up to REQUEST_TIMEOUT_MS each; destroy() aborts them.
    await (abandon ? this.pool.destroy() : this.pool.close());
  }
}

/** Reads at most `limit` bytes of the body, then lets the rest go (the connection is dropped if needed). */
async function readBounded(
  body: AsyncIterable<Buffer> & { destroy(): void },
  limit: number,
): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) parts.push(chunk.subarray(0, limit - size));
    size += chunk.length;
    if (size > limit * 4 + 65_536) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).toString("utf8");
}

function describe(error: Error): string {
  const code = (error as { code?: unknown }).code;
  const cause = (error as { cause?: unknown }).cause;
  const causeText = cause instanceof Error ? ` (${cause.message})` : "";
  return `${typeof code === "string" ? `${code}: ` : ""}${error.message}${causeText}`;
}
