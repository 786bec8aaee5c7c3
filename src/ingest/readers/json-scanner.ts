import { describeJsonError, jsonErrorPosition } from "./json-error.js";
import { isJsonSpace, JsonValueEnd } from "./json-value-end.js";

/** Longest invoice element accepted, in characters; a longer one is rejected without being kept whole. */
export const MAX_JSON_ELEMENT_CHARS = 8 * 1024 * 1024;

/** What the scanner finds: an element of the invoices array, or the reason the file is not usable JSON. */
export type ScanEvent =
  | { readonly kind: "element"; readonly index: number; readonly line: number; readonly value: unknown }
  | { readonly kind: "too-long"; readonly index: number }
  | { readonly kind: "error"; readonly line: number; readonly column: number; readonly message: string };

type State =
  | "start"
  | "objectKeyFirst"
  | "objectKey"
  | "objectColon"
  | "objectValue"
  | "objectAfterValue"
  | "arrayFirst"
  | "element"
  | "arrayAfter"
  | "end"
  | "failed";

/**
 * Streams the invoices out of a JSON document that is either a top-level array or an object with an
 * `invoices` array, in constant memory (one element at a time). It only finds where each value starts
 * and ends (brackets, strings, escapes); JSON.parse does the parsing, element by element.
 */
export class JsonInvoiceScanner {
  private buf = "";
  private pos = 0;
  private bufStart = 0; // absolute char offset of buf[0]
  private state: State = "start";
  private inObject = false;
  private sawInvoices = false;
  private key = "";
  private index = 0;
  // Resumable scan of the value being read: where it started, where to go on, whether its text was dropped.
  private valueStart = -1;
  private scanPos = 0;
  private readonly valueEnd = new JsonValueEnd();
  private tooLong = false;
  private objectAt: { readonly line: number; readonly column: number } = { line: 1, column: 1 };
  // Line counting up to an absolute offset, monotonic.
  private lineCountedTo = 0;
  private line = 1;
  private lineStartOffset = 0;

  *push(text: string): Generator<ScanEvent, void, undefined> {
    if (this.valueStart >= 0 && this.scanPos - this.valueStart > MAX_JSON_ELEMENT_CHARS) {
      // Too long to keep: scan on to its end without its text (memory stays bounded), then reject it.
      this.tooLong = true;
      this.pos = this.valueStart = this.scanPos;
    }
    this.lineAt(this.bufStart + this.pos); // count the lines of the text about to be dropped
    this.buf = this.pos === this.buf.length ? text : this.buf.slice(this.pos) + text;
    this.bufStart += this.pos;
    this.scanPos -= this.pos;
    if (this.valueStart >= 0) this.valueStart -= this.pos;
    this.pos = 0;
    yield* this.run(false);
  }

  *end(): Generator<ScanEvent, void, undefined> {
    yield* this.run(true);
    if (this.state === "failed") return;
    if (this.state === "start") {
      yield this.error(
        this.bufStart + this.buf.length,
        'the file is empty: expected a JSON array [ ... ] or an object {"invoices": [ ... ]}',
      );
    } else if (this.state !== "end") {
      yield this.error(
        this.bufStart + this.buf.length,
        "the file ends early (truncated?): the JSON is not complete",
      );
    } else if (this.inObject && !this.sawInvoices) {
      const message =
        'the top-level object has no "invoices" array; expected [ ... ] or {"invoices": [ ... ]}';
      yield { kind: "error", ...this.objectAt, message };
    }
  }

  private *run(final: boolean): Generator<ScanEvent, void, undefined> {
    for (;;) {
      if (this.state === "failed") return;
      if (this.state === "element" || (this.state === "objectValue" && this.key !== "invoices")) {
        if (!this.scanValue(final)) return;
        if (this.tooLong || this.pos - this.valueStart > MAX_JSON_ELEMENT_CHARS) {
          this.tooLong = false;
          this.valueStart = -1;
          if (this.state === "element") yield { kind: "too-long", index: ++this.index };
          this.state = this.state === "element" ? "arrayAfter" : "objectAfterValue";
          continue;
        }
        const start = this.bufStart + this.valueStart;
        const source = this.buf.slice(this.valueStart, this.pos);
        this.valueStart = -1;
        let value: unknown;
        try {
          value = JSON.parse(source);
        } catch (error) {
          const at = jsonErrorPosition(error);
          yield this.fail(
            at === undefined ? start : start + at,
            `not valid JSON: ${describeJsonError(error)}`,
          );
          return;
        }
        if (this.state === "element") {
          this.index++;
          yield { kind: "element", index: this.index, line: this.lineAt(start), value };
          this.state = "arrayAfter";
        } else {
          this.state = "objectAfterValue";
        }
        continue;
      }
      if (!this.skipSpace()) {
        return;
      }
      const c = this.buf.charCodeAt(this.pos);
      const at = this.bufStart + this.pos;
      switch (this.state) {
        case "start":
          if (c === 0x5b) this.open("arrayFirst");
          else if (c === 0x7b) {
            this.inObject = true;
            this.objectAt = this.position(at);
            this.open("objectKeyFirst");
          } else
            return yield this.fail(at, 'expected a JSON array [ ... ] or an object {"invoices": [ ... ]}');
          break;
        case "objectKeyFirst":
        case "objectKey":
          if (c === 0x7d && this.state === "objectKeyFirst") this.open("end");
          else if (c === 0x22) {
            this.state = "objectColon";
            this.startValue();
            if (!this.scanValue(final)) {
              this.state = "objectKey";
              this.pos = this.valueStart;
              this.valueStart = -1;
              return;
            }
            try {
              this.key = String(JSON.parse(this.buf.slice(this.valueStart, this.pos)));
            } catch (error) {
              return yield this.fail(at, `not valid JSON: ${describeJsonError(error)}`);
            }
            this.valueStart = -1;
          } else return yield this.fail(at, "expected a quoted key in the top-level object");
          break;
        case "objectColon":
          if (c !== 0x3a) return yield this.fail(at, "expected ':' after a key");
          this.pos++;
          this.state = "objectValue";
          if (this.key === "invoices") {
            if (!this.skipSpace()) {
              this.state = "objectValue";
              return;
            }
          } else {
            if (!this.skipSpace()) return;
            this.startValue();
          }
          break;
        case "objectValue": // only the "invoices" key arrives here
          if (c !== 0x5b) return yield this.fail(at, '"invoices" must be an array');
          if (this.sawInvoices)
            return yield this.fail(at, '"invoices" appears twice in the top-level object');
          this.sawInvoices = true;
          this.open("arrayFirst");
          break;
        case "objectAfterValue":
          if (c === 0x2c) this.open("objectKey");
          else if (c === 0x7d) this.open("end");
          else return yield this.fail(at, "expected ',' or '}' in the top-level object");
          break;
        case "arrayFirst":
          if (c === 0x5d) this.closeArray();
          else this.beginElement();
          break;
        case "arrayAfter":
          if (c === 0x2c) {
            this.pos++;
            if (!this.skipSpace()) {
              this.state = "element";
              this.valueStart = -1;
              return;
            }
            this.beginElement();
          } else if (c === 0x5d) this.closeArray();
          else return yield this.fail(at, "expected ',' or ']' between invoices");
          break;
        case "end":
          return yield this.fail(at, "unexpected content after the end of the JSON document");
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

  private beginElement(): void {
    this.state = "element";
    this.startValue();
  }

  private startValue(): void {
    this.valueStart = this.pos;
    this.scanPos = this.pos + 1;
    this.tooLong = false;
    this.valueEnd.begin(this.buf.charCodeAt(this.pos));
  }

  /** Advances over white space; false when the buffer ran out first. */
  private skipSpace(): boolean {
    while (this.pos < this.buf.length && isJsonSpace(this.buf.charCodeAt(this.pos))) this.pos++;
    return this.pos < this.buf.length;
  }

  /** Finds the end of the value starting at valueStart (pos goes there); false when more input is needed. */
  private scanValue(final: boolean): boolean {
    if (this.valueStart < 0) {
      if (!this.skipSpace()) return false;
      this.startValue();
    }
    const end = this.valueEnd.scan(this.buf, this.scanPos);
    this.scanPos = end ?? this.buf.length;
    if (end === undefined && !(final && this.valueEnd.endsWithInput)) return false;
    this.pos = this.scanPos;
    return true;
  }

  private lineAt(offset: number): number {
    const from = Math.max(this.lineCountedTo, this.bufStart) - this.bufStart;
    const to = offset - this.bufStart;
    for (let i = this.buf.indexOf("\n", from); i !== -1 && i < to; i = this.buf.indexOf("\n", i + 1)) {
      this.line++;
      this.lineStartOffset = this.bufStart + i + 1;
    }
    this.lineCountedTo = Math.max(this.lineCountedTo, offset);
    return this.line;
  }

  private fail(offset: number, message: string): ScanEvent {
    this.state = "failed";
    return this.error(offset, message);
  }

  private error(offset: number, message: string): ScanEvent {
    return { kind: "error", ...this.position(offset), message };
  }

  /** Line and column of an offset at or after the last one asked for. */
  private position(offset: number): { readonly line: number; readonly column: number } {
    const line = offset >= this.lineCountedTo ? this.lineAt(offset) : this.line;
    return { line, column: offset - this.lineStartOffset + 1 };
  }
}
