/** Markup that is already safe to send: built by `html` (values escaped) or trusted literals. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Anything `html` may interpolate: text (escaped), numbers, safe markup, lists of these, or nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for an HTML text node or a quoted attribute value. Pure. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ENTITIES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return "";
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join("");
  return escapeHtml(String(value));
}

/**
 * The console's only way to build markup: every interpolated value is escaped unless it is SafeHtml
 * itself, so text from files and from the service (external ids, errors, file names) is always text.
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  for (const [i, value] of values.entries()) out += render(value) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

/** A query string from pairs, skipping absent values; the result is text, escaped when interpolated. */
export function query(pairs: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(pairs)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
