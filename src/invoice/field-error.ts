/** A problem with one field of one record: data, not an exception, so a bad row never stops a file. */
export interface FieldError {
  /** Dotted field name as the canonical document names it, e.g. `routing.archive_policy`. */
  readonly field: string;
  /**
   * The source's own name for the field, when a source profile's `columns` mapped it (a CSV header, or a
   * dotted path into a JSON object): errors then speak the vendor's language as well as ours.
   */
  readonly column?: string;
  /** The offending value, shortened for reports and logs; absent when the field is missing. */
  readonly value?: string;
  readonly reason: string;
}

const MAX_VALUE_CHARS = 60;
// Control characters are escaped so that an error stays on one line of a report.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** Shortens a value for an error message; control characters are shown escaped so reports stay one line. */
export function truncateValue(value: unknown): string {
  const visible = describeValue(value).replace(
    CONTROL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return visible.length > MAX_VALUE_CHARS ? `${visible.slice(0, MAX_VALUE_CHARS)}…` : visible;
}

/** A one-line rendering of any value that cannot throw, however deep or cyclic it is. */
function describeValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object") return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    // Too deep for JSON.stringify (or cyclic): say what it is instead.
    return Array.isArray(value) ? `[array of ${value.length}]` : "{object}";
  }
}

/** Errors on one line: `field: reason (got "value")`, the field as `column "Land" (field)` when mapped. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors
    .map((e) => {
      const name = e.column === undefined ? e.field : `column "${truncateValue(e.column)}" (${e.field})`;
      return e.value === undefined ? `${name}: ${e.reason}` : `${name}: ${e.reason} (got "${e.value}")`;
    })
    .join("; ");
}
