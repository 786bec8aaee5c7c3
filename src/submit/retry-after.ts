/**
 * Parses a Retry-After header: delay-seconds or an HTTP date (RFC 9110 §10.2.3). Returns milliseconds
 * from `now`, never negative, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
