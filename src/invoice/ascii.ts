/** Printable ASCII that JSON writes unescaped: 0x20–0x7e but `"` and `\`. */
function isPlainJsonChar(c: number): boolean {
  return c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c;
}

/** Whether every character of `text` is one JSON writes as it is (so `"${text}"` is its JSON). */
export function isPlainJsonAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isPlainJsonChar(text.charCodeAt(i))) return false;
  return true;
}

/**
 * Copies `text` into `target` at `at` as one byte per character when it is all printable ASCII that
 * JSON writes unescaped (0x20–0x7e but `"` and `\`), and returns the bytes written; otherwise writes
 * nothing useful and returns -1, for the caller's general path. A loop in JavaScript beats a native
 * encoder call for the short strings of an invoice.
 */
export function writeAscii(target: Uint8Array, text: string, at: number): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!isPlainJsonChar(c)) return -1;
    target[at + i] = c;
  }
  return text.length;
}
