/**
 * How many names of a file's columns or fields a message, a log line or `check` lists: a file may have
 * 100,000 columns, and a list that long buries what it was meant to show.
 */
export const NAMES_LISTED = 20;

/** The first `max` names and how many were left out. */
export function firstNames(
  names: readonly string[],
  max = NAMES_LISTED,
): { readonly names: readonly string[]; readonly leftOut: number } {
  return { names: names.slice(0, max), leftOut: Math.max(0, names.length - max) };
}

/** "how many more" for the end of a capped list, or nothing when none was left out. */
export function leftOutText(leftOut: number, what: string): string {
  if (leftOut === 0) return "";
  return ` … and ${leftOut.toLocaleString("en-US")} more${what === "" ? "" : ` ${what}`}`;
}
