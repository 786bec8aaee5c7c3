/**
 * Where a URL the relay is given carries a credential, and the one way such a URL is shown. Every URL
 * setting may hold one: REDIS_URL, REDIS_CLUSTER_NODES, RESULTS_DATABASE_URL, CONSOLE_URL (and
 * NOTIFY_WEBHOOK_URL, which is a secret as a whole: src/ops/notify/webhook-url.ts). The drivers read a
 * credential from
 * - the userinfo password (`postgres://user:PASSWORD@host`), which the URL parser ends at the last `@`
 *   of the authority, so a password may hold `@` and `:`;
 * - the query: pg-connection-string copies every query parameter into the connection's settings, so
 *   `?password=` (which wins over the userinfo) and libpq's `sslpassword`; ioredis likewise takes every
 *   parameter as an option, so `?password=` and `?sentinelPassword=`. Names are percent-decoded too
 *   (`%70assword` is `password`), and a parameter may be repeated.
 * A parameter is taken for a credential by its name, generously: showing less of a URL costs nothing.
 * `sslkey`, `sslcert` and `sslrootcert` are paths to files, not secrets, and stay shown.
 */

/** What a credential is replaced with when a URL is shown. */
const MASK = "***";

const CREDENTIAL_NAME = /password|passwd|passphrase|secret|token|^pass$|^pwd$|^auth$|^api[-_]?key$/i;

/** Whether a query parameter of this (percent-decoded) name holds a credential. */
export function isCredentialParam(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/**
 * The userinfo password after `//` (the username ends at the first `:`, the password at the last `@`
 * before the path, query or fragment), and a bare `user:password@` at the start of the text or after a
 * comma or blank (a cluster node written without its scheme).
 */
const USERINFO = /(\/\/[^/?#:]*:)([^/?#]*)@/g;
/**
 * The same, to the last `@` of the URL (up to a blank or a comma): a password holding `/`, `?` or `#`
 * unencoded makes a URL no parser reads, and its whole text may then be quoted in a message; from the
 * `:` to that `@` is masked, so such a password is masked whole.
 */
const LOOSE_USERINFO = /(\/\/[^/?#:@\s,]*:)([^\s,]*)@/g;
const BARE_USERINFO = /((?:^|[,\s])[^/?#@\s,:]*:)([^/@\s,]*)@/g;
/** A query parameter: the value runs to the next `&` (a `#` ends it for the driver; masking on is safe). */
const PARAM = /([?&])([^&#=?]*)=([^&]*)/g;

interface Span {
  readonly start: number;
  readonly end: number;
  readonly kind: "userinfo" | "query";
}

/** Where the credentials are in `text`: the spans of userinfo passwords and credential parameters' values. */
function credentialSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const pattern of [USERINFO, LOOSE_USERINFO, BARE_USERINFO])
    for (const m of text.matchAll(pattern)) {
      const start = (m.index ?? 0) + (m[1]?.length ?? 0);
      const end = start + (m[2]?.length ?? 0);
      if (end > start) spans.push({ start, end, kind: "userinfo" });
    }
  for (const m of text.matchAll(PARAM)) {
    if (!isCredentialParam(decodeQueryText(m[2] ?? ""))) continue;
    const start = (m.index ?? 0) + 1 + (m[2]?.length ?? 0) + 1;
    const end = start + (m[3]?.length ?? 0);
    if (end > start) spans.push({ start, end, kind: "query" });
  }
  return merged(spans);
}

function merged(spans: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last !== undefined && span.start <= last.end)
      out[out.length - 1] = { ...last, end: Math.max(last.end, span.end) };
    else out.push(span);
  }
  return out;
}

/**
 * `text` with every credential a URL in it carries replaced by `***`: any text, a URL, a list of them
 * or a message quoting one. What a message or a log may show of a value that may hold a URL.
 */
export function maskUrlCredentials(text: string): string {
  let out = "";
  let at = 0;
  for (const span of credentialSpans(text)) {
    out += `${text.slice(at, span.start)}${MASK}`;
    at = span.end;
  }
  return out + text.slice(at);
}

/**
 * A URL setting as messages and logs show it: as written, its credentials masked; only its name when
 * it is not a URL at all (a typo could put a password where the masking does not look for one).
 */
export function safeUrl(url: string, setting: string): string {
  return parsesAsUrl(url) ? maskUrlCredentials(url) : `(${setting}: not a valid URL)`;
}

/**
 * The credentials a URL carries, in every form a text may quote them: as written, decoded as the
 * driver decodes them, and as the URL parser writes them back. For the logger and the CLI to mask by
 * value wherever one appears (a driver's error may quote it).
 */
export function urlCredentials(url: string | undefined): string[] {
  if (url === undefined) return [];
  const out = new Set<string>();
  for (const span of credentialSpans(url)) {
    const raw = url.slice(span.start, span.end);
    const decoded = span.kind === "query" ? decodeQueryText(raw) : decodeUserinfo(raw);
    out.add(raw).add(decoded);
    // As a URL parser writes it back, and as pg-connection-string re-encodes a URL with a blank in it.
    for (const form of [() => encodeURIComponent(decoded), () => encodeURI(raw).replace(/%25(\d\d)/g, "%$1")])
      try {
        out.add(form());
      } catch {
        // A lone surrogate: no URL carries it encoded.
      }
  }
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") out.add(parsed.password);
    for (const [name, value] of parsed.searchParams)
      if (isCredentialParam(name) && value !== "") out.add(value);
  } catch {
    // Not a URL: the spans found in its text are all there is.
  }
  out.delete("");
  return [...out];
}

/** Whether `url` parses, as the URL parser or, failing it, pg-connection-string reads it (empty host). */
export function parsesAsUrl(url: string): boolean {
  for (const candidate of [url, url.replace("@/", "@host/")])
    try {
      new URL(candidate);
      return true;
    } catch {
      // try the next reading
    }
  return false;
}

/** A query name or value exactly as URLSearchParams decodes it (`+` is a space; bad escapes stay). */
function decodeQueryText(text: string): string {
  return new URLSearchParams(`x=${text.replace(/[&#]/g, encodeURIComponent)}`).get("x") ?? text;
}

/** A userinfo password as the drivers decode it (`+` stays a plus). */
function decodeUserinfo(text: string): string {
  return decodeQueryText(text.replace(/\+/g, "%2B"));
}
