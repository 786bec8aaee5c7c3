/** A problem with one field of one record: data, not an exception, so a bad row never stops a file. */
export interface FieldError {
  /** Dotted field name as the canonical document names it, e.g. `routing.archive_policy`. */
  readonly field: string;
  /** The offending value, shortened for reports and logs; absent when the field is missing. */
  readonly value?: string;
  readonly reason: string;
}

const MAX_VALUE_CHARS = 60;

/** Shortens a value for an error message; control characters are shown escaped so reports stay one line. */
export function truncateValue(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) text = "undefined";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  // eslint-disable-next-line no-control-regex
  const visible = text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return visible.length > MAX_VALUE_CHARS ? `${visible.slice(0, MAX_VALUE_CHARS)}…` : visible;
}

export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors
    .map((e) => (e.value === undefined ? `${e.field}: ${e.reason}` : `${e.field}: ${e.reason} (got "${e.value}")`))
    .join("; ");
}
