import { request as httpRequest, type Agent, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { ExportResponse, IExporterTransport } from "@opentelemetry/otlp-exporter-base";
import { TracesClosedError } from "./errors/traces-closed-error.js";

const gzipped = promisify(gzip);

/**
 * Retries as the OTLP exporter specification and OpenTelemetry's own exporter do: at most five more
 * tries, waits from 1 s growing 1.5× up to 5 s with ±20 % jitter (or the collector's Retry-After), all
 * within the export timeout.
 */
const MORE_TRIES = 5;
const FIRST_WAIT_MS = 1000;
const WAIT_GROWTH = 1.5;
const LONGEST_WAIT_MS = 5000;
const JITTER = 0.2;
/** A collector answers an export with a small status message; more than this is not one. */
const ANSWER_MAX_BYTES = 1024 * 1024;
/** The answers the specification calls retryable: throttled, or the collector's gateway unavailable. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
/** Network failures a later try may not meet (the collector restarting, a name not resolvable yet). */
const RETRYABLE_ERRORS: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENOTFOUND",
  "ENETUNREACH",
  "EHOSTUNREACH",
]);

export interface OtlpTransportOptions {
  readonly url: string;
  /** The content type and OTEL_EXPORTER_OTLP_HEADERS. */
  readonly headers: () => Promise<Record<string, string>>;
  readonly compression: "gzip" | "none";
  /** The HTTP agent for the URL's protocol (src/tracing/export-agent.ts). */
  readonly agent: (protocol: string) => Promise<Agent>;
}

/**
 * How the OTLP/HTTP exporter sends a batch: a POST, retried as above. Nothing it waits for keeps the
 * process alive, and `close` ends every request and wait under way at once, answering each as failed:
 * so the time an exiting process gives its last spans bounds the exporter too, with no retry timer left
 * behind it (OpenTelemetry's own transport keeps one for up to 5 s).
 */
export class OtlpTransport implements IExporterTransport {
  #closed = false;
  /** What ends each request and wait under way. */
  readonly #under = new Set<() => void>();
  #agent: Promise<Agent> | undefined;

  constructor(private readonly options: OtlpTransportOptions) {}

  async send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
    const deadline = Date.now() + timeoutMillis;
    let wait = FIRST_WAIT_MS;
    for (let tries = 0; ; tries++) {
      const result = await this.#post(data, Math.max(1, deadline - Date.now()));
      if (result.status !== "retryable" || tries === MORE_TRIES) return result;
      const next =
        result.retryInMillis ?? Math.min(wait * (1 + JITTER * (2 * Math.random() - 1)), LONGEST_WAIT_MS);
      wait *= WAIT_GROWTH;
      if (next > deadline - Date.now()) return result;
      if (!(await this.#sleep(next))) return { status: "failure", error: new TracesClosedError() };
    }
  }

  /** Ends every request and wait under way; later sends fail at once. */
  close(): void {
    this.#closed = true;
    for (const end of [...this.#under]) end();
  }

  shutdown(): void {
    this.close();
  }

  /** Whether the wait ran its course (false: closed meanwhile). */
  #sleep(ms: number): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const end = (ran: boolean) => {
        clearTimeout(timer);
        this.#under.delete(cancel);
        resolve(ran);
      };
      const cancel = () => {
        end(false);
      };
      const timer = setTimeout(() => {
        end(true);
      }, ms);
      timer.unref();
      this.#under.add(cancel);
    });
  }

  async #post(data: Uint8Array, timeoutMs: number): Promise<ExportResponse> {
    if (this.#closed) return { status: "failure", error: new TracesClosedError() };
    const url = new URL(this.options.url);
    this.#agent ??= this.options.agent(url.protocol);
    const headers = { ...(await this.options.headers()) };
    let body = data;
    if (this.options.compression === "gzip") {
      body = await gzipped(data);
      headers["Content-Encoding"] = "gzip";
    }
    const agent = await this.#agent;
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<ExportResponse>((resolve) => {
      const end = (result: ExportResponse) => {
        this.#under.delete(cancel);
        resolve(result);
      };
      const req = request(url, { method: "POST", headers, agent }, (res) => {
        readAnswer(res).then(
          (answer) => {
            end(resultOf(res, answer));
          },
          (error: unknown) => {
            end({ status: "failure", error: error instanceof Error ? error : new Error(String(error)) });
          },
        );
      });
      const cancel = () => {
        req.destroy();
        end({ status: "failure", error: new TracesClosedError() });
      };
      this.#under.add(cancel);
      req.setTimeout(timeoutMs, () => {
        req.destroy();
        end({ status: "retryable", error: new Error(`no answer within ${Math.round(timeoutMs)} ms`) });
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        const retryable = typeof error.code === "string" && RETRYABLE_ERRORS.has(error.code);
        end(retryable ? { status: "retryable", error } : { status: "failure", error });
      });
      req.end(body);
    });
  }
}

/** What the collector's answer means: taken, worth another try (with its Retry-After), or refused. */
function resultOf(res: IncomingMessage, answer: Buffer): ExportResponse {
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return { status: "success", data: answer };
  const error = new Error(`the collector answered HTTP ${status}`);
  if (!RETRYABLE_STATUSES.has(status)) return { status: "failure", error };
  const retryAfter = retryAfterMs(res.headers["retry-after"]);
  return retryAfter === undefined
    ? { status: "retryable", error }
    : { status: "retryable", error, retryInMillis: retryAfter };
}

/** Retry-After in seconds or as a date (RFC 9110); undefined when absent or unreadable. */
function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

async function readAnswer(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > ANSWER_MAX_BYTES) {
      res.destroy();
      throw new Error(`the collector's answer is larger than ${ANSWER_MAX_BYTES} bytes`);
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
