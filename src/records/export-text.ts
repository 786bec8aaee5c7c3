/** SQL fragments and text cleaning shared by the statements of the export (export-batch.ts, export-rows.ts). */

/** epoch ms (bigint) → timestamptz, exactly (no float on the way). */
export const at = (column: string) => `'epoch'::timestamptz + ${column} * interval '1 millisecond'`;

/** `a` is a later stream entry id than `b` (ids compare as (ms, seq)). */
export const later = (a: string, b: string) =>
  `(split_part(${a}, '-', 1)::numeric, split_part(${a}, '-', 2)::numeric) > ` +
  `(split_part(${b}, '-', 1)::numeric, split_part(${b}, '-', 2)::numeric)`;

/** The same order in JavaScript: stream id `a` is later than `b`. */
export function laterId(a: string, b: string): boolean {
  const [am = 0n, as = 0n] = a.split("-").map(BigInt);
  const [bm = 0n, bs = 0n] = b.split("-").map(BigInt);
  return am > bm || (am === bm && as > bs);
}

/** A UTF-16 surrogate without its other half (JSON.parse lets a file's "\ud800" through). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Text that may need cleaning: most has neither a NUL nor a surrogate, and is passed on as it is. */
const SUSPECT = /[\0\uD800-\uDFFF]/;

/**
 * Text PostgreSQL takes: it refuses the NUL character in text and in jsonb strings, and a lone surrogate
 * escaped in JSON (the rows of the hot tables travel as one JSON document).
 */
export const clean = (value: string | null): string | null =>
  value === null || !SUSPECT.test(value)
    ? value
    : value.replace(/\0/g, "\uFFFD").replace(LONE_SURROGATE, "\uFFFD");

/** One order for every process: two exporters writing the same rows at once lock them in the same order. */
const sorted = <T>(kept: Map<string, T>): T[] =>
  [...kept.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);

/** Keeps the last of the items with the same identity, so no statement touches a row twice. */
export function lastBy<T>(items: readonly T[], identity: (item: T) => string): T[] {
  const kept = new Map<string, T>();
  for (const item of items) kept.set(identity(item), item);
  return sorted(kept);
}

/**
 * Keeps, of the items with the same identity, the one from the latest stream entry: the newest event
 * wins within a read as it does against the table, in whatever order the read holds them.
 */
export function newestBy<T extends { readonly id: string }>(
  items: readonly T[],
  identity: (item: T) => string,
): T[] {
  const kept = new Map<string, T>();
  for (const item of items) {
    const key = identity(item);
    const seen = kept.get(key);
    if (seen === undefined || !laterId(seen.id, item.id)) kept.set(key, item);
  }
  return sorted(kept);
}
