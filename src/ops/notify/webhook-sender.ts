import { request } from "undici";
import type { Logger } from "../../log/logger.js";
import { maskSecrets } from "../../log/logger.js";
import type { Notice } from "./notice.js";
import { safeWebhookUrl, webhookSecrets } from "./webhook-url.js";

export interface WebhookOptions {
  readonly url: string;
  /** Values never sent (the API key): masked in the body as a last guard. */
  readonly secrets: readonly string[];
  readonly logger: Logger;
  /** Per attempt, headers and body. */
  readonly timeoutMs?: number;
  readonly attempts?: number;
  /** Backoff before attempt n+1: baseDelayMs * 2^(n-1). */
  readonly baseDelayMs?: number;
  /** Longest Retry-After of a 429/503 honoured; a longer one is cut to this. */
  readonly retryAfterCapMs?: number;
}

/** The one-method port the alerts go through (a webhook here; a test may record them). */
export interface NoticeSender {
  /** Resolves once delivered or given up on (logged); never rejects. */
  send(notice: Notice): Promise<void>;
}

const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * POSTs notices as JSON with a timeout and bounded retries (429 and 5xx honour Retry-After up to a cap),
 * then logs a warning naming the webhook by its origin only and gives up: an alert that cannot be
 * delivered never stops or fails the process that sends it.
 */
export function webhookSender(options: WebhookOptions): NoticeSender {
  const attempts = options.attempts ?? 3;
  const timeoutMs = options.timeoutMs ?? 5000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const retryAfterCapMs = options.retryAfterCapMs ?? 10_000;
  const shown = safeWebhookUrl(options.url);
  const secrets = [...options.secrets, ...webhookSecrets(options.url)].filter((s) => s.length >= 4);
  return {
    async send(notice) {
      const body = maskSecrets(JSON.stringify(notice), secrets);
      let problem = "";
      for (let attempt = 1; attempt <= attempts; attempt++) {
        const result = await post(options.url, body, timeoutMs);
        if (result.kind === "ok") {
          options.logger.info({ event: notice.event, webhook: shown }, "alert sent");
          return;
        }
        problem = maskSecrets(result.problem, secrets);
        if (!result.retry || attempt === attempts) break;
        const backoff = baseDelayMs * 2 ** (attempt - 1);
        await sleep(Math.min(result.retryAfterMs ?? backoff, retryAfterCapMs));
      }
      options.logger.warn(
        { event: notice.event, webhook: shown, problem },
        "alert not delivered: the NOTIFY_WEBHOOK_URL endpoint did not take it; giving up (check the webhook)",
      );
    },
  };
}

type PostResult =
  | { readonly kind: "ok" }
  | {
      readonly kind: "failed";
      readonly problem: string;
      readonly retry: boolean;
      readonly retryAfterMs?: number | undefined;
    };

async function post(url: string, body: string, timeoutMs: number): Promise<PostResult> {
  try {
    const response = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body.dump();
    if (response.statusCode >= 200 && response.statusCode < 300) return { kind: "ok" };
    const header = response.headers["retry-after"];
    return {
      kind: "failed",
      problem: `HTTP ${response.statusCode}`,
      retry: RETRYABLE.has(response.statusCode),
      retryAfterMs: retryAfterMs(typeof header === "string" ? header : undefined),
    };
  } catch (error) {
    const code =
      error instanceof Error && "code" in error && typeof error.code === "string" ? ` (${error.code})` : "";
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "failed", problem: `${message}${code}`, retry: true };
  }
}

/** Retry-After: delay-seconds or an HTTP date. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
