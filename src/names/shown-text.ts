// Characters that change what a terminal, a log viewer or a page shows around them: the C0 and C1
// controls (line breaks, escape sequences), DEL, the line and paragraph separators, and the
// bidirectional controls (U+202E shows "invoice\u202Evsc.exe" as "invoiceexe.csv").
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeOf(c: string): string {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * Text from outside (a file name, an error quoting one) made safe for one line: each character above
 * written as an escape (`\n`, `\u202e`), the rest as it is. For messages, tables and log text.
 */
export function escapedText(text: string): string {
  return text.replace(UNSAFE, escapeOf);
}

/** Only the characters JSON leaves as they are (C1, separators, bidi) escaped: for a JSON text. */
export function escapedJsonText(json: string): string {
  return json.replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, escapeOf);
}

/**
 * A file name as a person reads it (tables, `check --source`, messages): as it is when it holds nothing
 * a terminal acts on; otherwise in double quotes, with those characters, `\` and `"` escaped
 * (`"line\nbreak.csv"`) and bytes that are not UTF-8 as `\xff`. A printed name so cannot fake a line
 * or reorder the text around it, and a quoted name is never taken for a bare one.
 */
export function shownName(name: string | Buffer): string {
  const pieces = typeof name === "string" ? [name] : utf8Pieces(name);
  const plain = pieces.every((p) => typeof p === "string" && !p.startsWith('"') && !hasUnsafe(p));
  if (plain) return pieces.join("");
  const inner = pieces
    .map((p) =>
      typeof p === "string"
        ? p.replace(/[\\"]/g, (c) => `\\${c}`).replace(UNSAFE, escapeOf)
        : `\\x${p.toString(16).padStart(2, "0")}`,
    )
    .join("");
  return `"${inner}"`;
}

function hasUnsafe(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text);
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The UTF-8 text of `bytes`, each byte that starts no valid character given as a number instead. */
function utf8Pieces(bytes: Buffer): (string | number)[] {
  const pieces: (string | number)[] = [];
  let i = 0;
  while (i < bytes.length) {
    let char: string | undefined;
    let length = 1;
    for (; length <= 4 && i + length <= bytes.length && char === undefined; length++) {
      try {
        char = strict.decode(bytes.subarray(i, i + length));
      } catch {
        // not a whole character yet, or never one
      }
    }
    if (char === undefined) {
      pieces.push(bytes[i] ?? 0);
      i += 1;
    } else {
      pieces.push(char);
      i += length - 1;
    }
  }
  return pieces;
}
