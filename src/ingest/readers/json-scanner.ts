import { describeJsonError, jsonErrorPosition } from "./json-error.js";

/** What the scanner finds: an element of the invoices array, or the reason the file is not usable JSON. */
export type ScanEvent =
  | { readonly kind: "element"; readonly index: number; readonly line: number; readonly value: unknown }
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

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

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
  // Resumable scan of the value being read: where it started, nesting depth, string state.
  private valueStart = -1;
  private scanPos = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  // Line counting up to an absolute offset, monotonic.
  private lineCountedTo = 0;
  private line = 1;
  private lineStartOffset = 0;

  *push(text: string): Generator<ScanEvent, void, undefined> {
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
        0,
        'the file is empty: expected a JSON array [ ... ] or an object {"invoices": [ ... ]}',
      );
    } else if (this.state !== "end") {
      yield this.error(
        this.bufStart + this.buf.length,
        "the file ends early (truncated?): the JSON is not complete",
      );
    } else if (this.inObject && !this.sawInvoices) {
      yield this.error(
        0,
        'the top-level object has no "invoices" array; expected [ ... ] or {"invoices": [ ... ]}',
      );
    }
  }

  private *run(final: boolean): Generator<ScanEvent, void, undefined> {
    for (;;) {
      if (this.state === "failed") return;
      if (this.state === "element" || (this.state === "objectValue" && this.key !== "invoices")) {
        const done = this.scanValue(final);
        if (done === undefined) return;
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
            const done = this.scanValue(final);
            if (done === undefined) {
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
    this.scanPos = this.pos;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
  }

  /** Advances over white space; false when the buffer ran out first. */
  private skipSpace(): boolean {
    while (this.pos < this.buf.length && isSpace(this.buf.charCodeAt(this.pos))) this.pos++;
    return this.pos < this.buf.length;
  }

  /** Finds the end of the value starting at valueStart; undefined when more input is needed. */
  private scanValue(final: boolean): true | undefined {
    if (this.valueStart < 0) {
      if (!this.skipSpace()) return undefined;
      this.startValue();
    }
    const buf = this.buf;
    let i = this.scanPos;
    const first = buf.charCodeAt(this.valueStart);
    const container = first === 0x7b || first === 0x5b;
    const string = first === 0x22;
    if (i === this.valueStart) {
      i++;
      if (container) this.depth = 1;
      else if (string) this.inString = true;
    }
    for (; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) {
          this.inString = false;
          if (string) return this.finishValue(i + 1);
        }
      } else if (container) {
        if (c === 0x22) this.inString = true;
        else if (c === 0x7b || c === 0x5b) this.depth++;
        else if (c === 0x7d || c === 0x5d) {
          if (--this.depth === 0) return this.finishValue(i + 1);
        }
      } else if (c === 0x2c || c === 0x5d || c === 0x7d || isSpace(c)) {
        return this.finishValue(i);
      }
    }
    this.scanPos = i;
    if (final && !container && !string && i > this.valueStart) return this.finishValue(i);
    return undefined;
  }

  private finishValue(end: number): true {
    this.pos = end;
    this.scanPos = end;
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
    const line = offset >= this.lineCountedTo ? this.lineAt(offset) : this.line;
    return { kind: "error", line, column: offset - this.lineStartOffset + 1, message };
  }
}
