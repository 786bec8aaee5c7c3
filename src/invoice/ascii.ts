/**
 * Copies `text` into `target` at `at` as one byte per character when it is all printable ASCII that
 * JSON writes unescaped (0x20–0x7e but `"` and `\`), and returns the bytes written; otherwise writes
 * nothing useful and returns -1, for the caller's general path. A loop in JavaScript beats a native
 * encoder call for the short strings of an invoice.
 */
export function writeAscii(target: Uint8Array, text: string, at: number): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
    target[at + i] = c;
  }
  return text.length;
}
