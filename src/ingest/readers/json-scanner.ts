import { describeJsonError, jsonErrorPosition } from "./json-error.js";
import { isJsonSpace, JsonValueEnd, ValueText, type ScanWork } from "./json-value-end.js";

export type { ScanWork } from "./json-value-end.js";

/** Longest invoice element accepted, in characters; a longer one is rejected without being kept whole. */
export const MAX_JSON_ELEMENT_CHARS = 8 * 1024 * 1024;

/**
 * Longest key of the top-level object accepted, in characters as written (escapes included), the same
 * as an element's limit. No field name is this long: such a key is more likely a quote left open that
 * swallowed the file, so the file is refused as soon as the key passes the limit, without reading on.
 */
export const MAX_JSON_KEY_CHARS = MAX_JSON_ELEMENT_CHARS;

/** What the scanner finds: an element of the invoices array, or the reason the file is not usable JSON. */
export type ScanEvent =
  | {
      readonly kind: "element";
      readonly index: number;
      readonly line: number;
      readonly value: unknown;
      /** The element as written, which `value` was parsed from. */
      readonly text: string;
    }
  | { readonly kind: "too-long"; readonly index: number }
  | { readonly kind: "error"; readonly line: number; readonly column: number; readonly message: string };

type State =
  | "start"
  | "objectKeyFirst"
  | "objectKey"
  | "key" // inside a key of the top-level object
  | "objectColon"
  | "objectValue"
  | "objectAfterValue"
  | "arrayFirst"
  | "element"
  | "arrayAfter"
  | "end"
  | "failed";

interface Position {
  readonly line: number;
  readonly column: number;
}

/**
 * Streams the invoices out of a JSON document that is either a top-level array or an object with an
 * `invoices` array, in constant memory (one element at a time). It only finds where each value starts
 * and ends (brackets, strings, escapes); JSON.parse does the parsing, element by element.
 *
 * Every character is looked at a bounded number of times however the text is chunked: a key or value
 * that spans chunks resumes where the last chunk ended, and its text is joined once, at its end.
 */
export class JsonInvoiceScanner {
  private text = ""; // the chunk being scanned
  private pos = 0;
  private textStart = 0; // absolute char offset of text[0]
  private state: State = "start";
  private inObject = false;
  private sawInvoices = false;
  private key = "";
  private index = 0;
  private objectAt: Position = { line: 1, column: 1 };
  // The key or value being read (a token): its scan state and text, where its text in this chunk starts,
  // where its scan goes on, and where it started in the file.
  private reading = false;
  private readonly valueEnd = new JsonValueEnd();
  private readonly token: ValueText;
  private tokenFrom = 0;
  private scanFrom = 0;
  private tokenAt: Position = { line: 1, column: 1 };
  // Line counting up to an absolute offset, monotonic; nextBreak is the next "\n" of the current chunk
  // (Infinity when none is left), so each chunk is searched for line breaks once.
  private line = 1;
  private lineStartOffset = 0;
  private nextBreak = Number.POSITIVE_INFINITY;

  constructor(private readonly work: ScanWork = { chars: 0 }) {
    this.token = new ValueText(work);
  }

  *push(text: string): Generator<ScanEvent, void, undefined> {
    this.lineAt(this.textStart + this.text.length); // the line breaks of the chunk being left
    this.textStart += this.text.length;
    this.text = text;
    this.pos = this.tokenFrom = this.scanFrom = 0;
    this.nextBreak = this.findBreak(0);
    yield* this.run(false);
  }

  *end(): Generator<ScanEvent, void, undefined> {
    yield* this.run(true);
    if (this.state === "failed") return;
    const end = this.position(this.textStart + this.text.length);
    if (this.state === "start") {
      yield this.error(
        end,
        'the file is empty: expected a JSON array [ ... ] or an object {"invoices": [ ... ]}',
      );
    } else if (this.state !== "end") {
      yield this.error(end, "the file ends early (truncated?): the JSON is not complete");
    } else if (this.inObject && !this.sawInvoices) {
      yield this.error(
        this.objectAt,
        'the top-level object has no "invoices" array; expected [ ... ] or {"invoices": [ ... ]}',
      );
    }
  }

  private *run(final: boolean): Generator<ScanEvent, void, undefined> {
    for (;;) {
      if (this.state === "failed") return;
      if (
        this.state === "key" ||
        this.state === "element" ||
        (this.state === "objectValue" && this.key !== "invoices")
      ) {
        if (!this.reading) {
          if (!this.skipSpace()) return;
          this.beginToken();
        }
        const ended = this.scanToken(final);
        if (this.state === "key" && this.token.tooLong) {
          const message = `a key of the top-level object is longer than ${MAX_JSON_KEY_CHARS} characters (a quote left open?); keys there are "invoices" and short names`;
          return yield this.fail(this.tokenAt, message);
        }
        if (!ended) return;
        yield* this.endToken();
        continue;
      }
      if (!this.skipSpace()) return;
      const c = this.text.charCodeAt(this.pos);
      this.work.chars++;
      switch (this.state) {
        case "start":
          if (c === 0x5b) this.open("arrayFirst");
          else if (c === 0x7b) {
            this.inObject = true;
            this.objectAt = this.here();
            this.open("objectKeyFirst");
          } else
            return yield this.fail(
              this.here(),
              'expected a JSON array [ ... ] or an object {"invoices": [ ... ]}',
            );
          break;
        case "objectKeyFirst":
        case "objectKey":
          if (c === 0x7d && this.state === "objectKeyFirst") this.open("end");
          else if (c === 0x22) this.state = "key";
          else return yield this.fail(this.here(), "expected a quoted key in the top-level object");
          break;
        case "objectColon":
          if (c !== 0x3a) return yield this.fail(this.here(), "expected ':' after a key");
          this.open("objectValue");
          break;
        case "objectValue": // only the "invoices" key arrives here
          if (c !== 0x5b) return yield this.fail(this.here(), '"invoices" must be an array');
          if (this.sawInvoices)
            return yield this.fail(this.here(), '"invoices" appears twice in the top-level object');
          this.sawInvoices = true;
          this.open("arrayFirst");
          break;
        case "objectAfterValue":
          if (c === 0x2c) this.open("objectKey");
          else if (c === 0x7d) this.open("end");
          else return yield this.fail(this.here(), "expected ',' or '}' in the top-level object");
          break;
        case "arrayFirst":
          if (c === 0x5d) this.closeArray();
          else this.state = "element";
          break;
        case "arrayAfter":
          if (c === 0x2c) this.open("element");
          else if (c === 0x5d) this.closeArray();
          else return yield this.fail(this.here(), "expected ',' or ']' between invoices");
          break;
        case "end":
          return yield this.fail(this.here(), "unexpected content after the end of the JSON document");
      }
    }
  }

  private open(next: State): void {
    this.pos++;
    this.state = next;
  }

  private closeArray(): void {
    this.pos++;
    this.state = this.inObject ? "objectAfterValue" : "end";
  }

  /** Starts the key or value whose first character is at pos. */
  private beginToken(): void {
    this.reading = true;
    this.tokenAt = this.here();
    this.tokenFrom = this.pos;
    this.scanFrom = this.pos + 1;
    // A key's limit is on the key as written between its quotes.
    this.token.clear(this.state === "key" ? MAX_JSON_KEY_CHARS + 2 : MAX_JSON_ELEMENT_CHARS);
    this.valueEnd.begin(this.text.charCodeAt(this.pos));
    this.work.chars++;
  }

  /** Scans on to the token's end (pos goes past it) and keeps its text; false when more input is needed. */
  private scanToken(final: boolean): boolean {
    const end = this.valueEnd.scan(this.text, this.scanFrom);
    const stop = end ?? this.text.length;
    this.work.chars += stop - this.scanFrom;
    this.token.keep(this.text, this.tokenFrom, stop);
    this.scanFrom = this.tokenFrom = stop;
    if (end === undefined && !(final && this.valueEnd.endsWithInput)) return false;
    this.pos = stop;
    this.reading = false;
    return true;
  }

  /** Parses the token just scanned and moves to the state after it. */
  private *endToken(): Generator<ScanEvent, void, undefined> {
    const element = this.state === "element";
    if (this.token.tooLong) {
      if (element) yield { kind: "too-long", index: ++this.index };
      this.state = element ? "arrayAfter" : "objectAfterValue";
      return;
    }
    const source = this.token.join();
    this.work.chars += source.length;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      const at = this.state === "key" ? undefined : jsonErrorPosition(error);
      const where = at === undefined ? this.tokenAt : this.within(source, at);
      return yield this.fail(where, `not valid JSON: ${describeJsonError(error)}`);
    }
    if (this.state === "key") {
      this.key = String(value);
      this.state = "objectColon";
    } else if (element) {
      yield { kind: "element", index: ++this.index, line: this.tokenAt.line, value, text: source };
      this.state = "arrayAfter";
    } else {
      this.state = "objectAfterValue";
    }
  }

  /** Advances over white space; false when the chunk ran out first. */
  private skipSpace(): boolean {
    const from = this.pos;
    while (this.pos < this.text.length && isJsonSpace(this.text.charCodeAt(this.pos))) this.pos++;
    this.work.chars += this.pos - from;
    return this.pos < this.text.length;
  }

  private lineAt(offset: number): number {
    while (this.nextBreak < offset) {
      this.line++;
      this.lineStartOffset = this.nextBreak + 1;
      this.nextBreak = this.findBreak(this.lineStartOffset - this.textStart);
    }
    return this.line;
  }

  /** Absolute offset of the first "\n" of the current chunk at or after index `from`, or Infinity. */
  private findBreak(from: number): number {
    const i = this.text.indexOf("\n", from);
    this.work.chars += (i === -1 ? this.text.length : i + 1) - from;
    return i === -1 ? Number.POSITIVE_INFINITY : this.textStart + i;
  }

  private fail(at: Position, message: string): ScanEvent {
    this.state = "failed";
    return this.error(at, message);
  }

  private error(at: Position, message: string): ScanEvent {
    return { kind: "error", ...at, message };
  }

  private here(): Position {
    return this.position(this.textStart + this.pos);
  }

  /** Line and column of an offset at or after the last one asked for. */
  private position(offset: number): Position {
    return { line: this.lineAt(offset), column: offset - this.lineStartOffset + 1 };
  }

  /** Line and column of character `at` of a token's text, which may have spanned chunks. */
  private within(source: string, at: number): Position {
    const lastBreak = source.lastIndexOf("\n", at - 1);
    if (lastBreak === -1) return { line: this.tokenAt.line, column: this.tokenAt.column + at };
    let breaks = 0;
    for (let i = source.indexOf("\n"); i !== -1 && i <= lastBreak; i = source.indexOf("\n", i + 1)) breaks++;
    return { line: this.tokenAt.line + breaks, column: at - lastBreak };
  }
}
