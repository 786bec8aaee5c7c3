import { firstHeaderValue } from "./extract.js";

/** delay-seconds, as services send it: an integer, or a decimal some send, first of a list if repeated. */
const SECONDS = /^(\d+(?:\.\d+)?)\s*(?:,|$)/;
/** An HTTP date names its day or month (RFC 9110 §5.6.7); a bare number is never a date. */
const DATE_WORD = /[A-Za-z]{3}/;

/**
 * Parses a Retry-After header at the edge: delay-seconds (RFC 9110 §10.2.3; an integer, or a decimal
 * such as "1.5", and the first of a list such as "12, 13" when the header came twice) or an HTTP date.
 * Returns milliseconds from `now`, never negative, or undefined when absent or unreadable. A date is the
 * service's clock: read against the answer's own `Date` (`answeredAt`) where it has a readable one, so a
 * partner's clock seconds ahead or behind of this machine's asks the wait it meant.
 */
export function parseRetryAfter(
  value: string | undefined,
  now: number,
  answeredAt?: string,
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const seconds = SECONDS.exec(text);
  if (seconds?.[1] !== undefined) return Math.round(Number(seconds[1]) * 1000);
  if (!DATE_WORD.test(text)) return undefined;
  // a list of dates: the first (each ends in GMT, and a date has a comma of its own after its day)
  const date = Date.parse(text.replace(/GMT\s*,.*$/s, "GMT"));
  if (Number.isNaN(date)) return undefined;
  const served = answeredAt === undefined ? Number.NaN : Date.parse(answeredAt);
  return Math.max(0, date - (Number.isNaN(served) ? now : served));
}

/** The Retry-After of an answer's headers (the first of each), its date read against the answer's `Date`. */
export function retryAfterOf(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
  now: number,
): number | undefined {
  return parseRetryAfter(firstHeaderValue(headers["retry-after"]), now, firstHeaderValue(headers["date"]));
}
