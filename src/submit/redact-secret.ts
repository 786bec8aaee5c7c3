/** What a secret is replaced with. */
const REDACTED = "[redacted]";

/** A cut echo this short may stay (messages may show a secret's first characters); a longer one may not. */
const SHOWN_PREFIX_CHARS = 3;

/**
 * `text` without `secret`: every whole occurrence, and a trailing partial one longer than a few
 * characters (a body cut at its bound inside an echoed key). A service that echoes the bearer key in an
 * answer must not carry it into the ledger, the reports or the messages built from its answers.
 */
export function redactSecret(text: string, secret: string): string {
  if (secret.length === 0) return text;
  const out = text.includes(secret) ? text.split(secret).join(REDACTED) : text;
  const first = secret.charAt(0);
  const last = out.length - SHOWN_PREFIX_CHARS - 1;
  for (
    let at = out.indexOf(first, Math.max(0, out.length - secret.length + 1));
    at !== -1 && at <= last;
    at = out.indexOf(first, at + 1)
  ) {
    if (secret.startsWith(out.slice(at))) return `${out.slice(0, at)}${REDACTED}`;
  }
  return out;
}

type HeaderValue = string | readonly string[] | undefined;

/** Response headers with the secret redacted from every value. */
export function redactSecretInHeaders(
  headers: Readonly<Record<string, HeaderValue>>,
  secret: string,
): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] =
      typeof value === "string"
        ? redactSecret(value, secret)
        : value === undefined
          ? undefined
          : value.map((v) => redactSecret(v, secret));
  }
  return out;
}
