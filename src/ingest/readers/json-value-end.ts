const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Finds where one JSON value ends, resumably across chunks and without parsing it: it follows brackets,
 * strings and escapes only, so nesting of any depth costs no stack. JSON.parse checks the value later.
 */
export class JsonValueEnd {
  private kind: "container" | "string" | "scalar" = "scalar";
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Starts a value whose first character (already consumed) is `first`. */
  begin(first: number): void {
    this.kind = first === 0x7b || first === 0x5b ? "container" : first === QUOTE ? "string" : "scalar";
    this.depth = this.kind === "container" ? 1 : 0;
    this.inString = this.kind === "string";
    this.escaped = false;
  }

  /** Index just past the value's end, scanning `text` from `from`; undefined when the text ends first. */
  scan(text: string, from: number): number | undefined {
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.kind === "string") return i + 1;
        }
      } else if (this.kind === "container") {
        if (c === QUOTE) this.inString = true;
        else if (c === 0x7b || c === 0x5b) this.depth++;
        else if (c === 0x7d || c === 0x5d) {
          if (--this.depth === 0) return i + 1;
        }
      } else if (c === 0x2c || c === 0x5d || c === 0x7d || isJsonSpace(c)) {
        return i;
      }
    }
    return undefined;
  }

  /** Whether the value is complete when the input ends where the scan stopped (only a bare scalar is). */
  get endsWithInput(): boolean {
    return this.kind === "scalar";
  }
}
