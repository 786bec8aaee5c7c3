/** delay-seconds, as services send it: an integer, or a decimal some send, first of a list if repeated. */
const SECONDS = /^(\d+(?:\.\d+)?)\s*(?:,|$)/;
/** An HTTP date names its day or month (RFC 9110 §5.6.7); a bare number is never a date. */
const DATE_WORD = /[A-Za-z]{3}/;

/**
 * Parses a Retry-After header at the edge: delay-seconds (RFC 9110 §10.2.3; an integer, or a decimal
 * such as "1.5", and the first of a list such as "12, 13" when the header came twice) or an HTTP date.
 * Returns milliseconds from `now`, never negative, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const seconds = SECONDS.exec(text);
  if (seconds?.[1] !== undefined) return Math.round(Number(seconds[1]) * 1000);
  if (!DATE_WORD.test(text)) return undefined;
  // a list of dates: the first (each ends in GMT, and a date has a comma of its own after its day)
  const date = Date.parse(text.replace(/GMT\s*,.*$/s, "GMT"));
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
