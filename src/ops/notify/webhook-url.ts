import { urlCredentials } from "../../config/url-credentials.js";

/**
 * NOTIFY_WEBHOOK_URL is a secret: Slack and Teams incoming webhooks carry their token in the path (and
 * some endpoints in the query). What may be shown of it is its origin; what logs must mask is the whole
 * URL and each part of it that holds the token.
 */
export function safeWebhookUrl(url: string): string {
  try {
    return `${new URL(url).origin}/[redacted]`;
  } catch {
    return "[redacted]";
  }
}

/**
 * The literal values a logger masks for this webhook URL: the URL as set, its path+query, path and
 * query, and any credential it carries elsewhere (a userinfo password: src/config/url-credentials.ts).
 */
export function webhookSecrets(url: string | undefined): string[] {
  if (url === undefined) return [];
  const out = [url, ...urlCredentials(url)];
  try {
    const parsed = new URL(url);
    const tail = `${parsed.pathname}${parsed.search}`;
    if (tail.length > 1) out.push(tail);
    if (parsed.pathname.length > 1) out.push(parsed.pathname);
    if (parsed.search.length > 1) out.push(parsed.search);
    if (parsed.href !== url) out.push(parsed.href);
  } catch {
    // Not a URL: the configuration refuses it before anything is logged.
  }
  return out;
}
