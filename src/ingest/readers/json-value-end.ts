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

/** Characters a reader examined, copied or parsed: lets a test check that its work is linear in the input. */
export interface ScanWork {
  chars: number;
}

/**
 * The text of one value that may span many chunks, kept as the chunks' pieces and joined once when the
 * value ends: re-joining the pending text on every chunk would copy it again each time (quadratic in the
 * value's length). Past `limit` characters the pieces are dropped and only the length is counted.
 */
export class ValueText {
  private readonly parts: string[] = [];
  private chars = 0;
  private limit = 0;

  constructor(private readonly work: ScanWork) {}

  /** Forgets the previous value; the next one is too long past `limit` characters. */
  clear(limit: number): void {
    this.parts.length = 0;
    this.chars = 0;
    this.limit = limit;
  }

  /** Appends text[from, to). */
  keep(text: string, from: number, to: number): void {
    this.chars += to - from;
    if (this.tooLong) this.parts.length = 0;
    else if (to > from) {
      this.work.chars += to - from;
      this.parts.push(text.slice(from, to));
    }
  }

  get tooLong(): boolean {
    return this.chars > this.limit;
  }

  /** The text kept so far, whole; only when it is not too long. */
  join(): string {
    if (this.parts.length === 1) return this.parts[0] ?? "";
    this.work.chars += this.chars;
    return this.parts.join("");
  }
}
