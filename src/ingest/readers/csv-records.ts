import { InvariantError } from "../../errors/invariant-error.js";
/**
 * One CSV record: its fields and the physical line it starts on (with `lastLine`, the last line it holds,
 * when a quoted field took it over several lines), or why it cannot be split into fields.
 */
export type CsvRecord =
  | {
      readonly kind: "record";
      readonly line: number;
      readonly lastLine?: number;
      readonly fields: readonly string[];
      /** The first quoted field that held a line break: the lines its quotes opened and closed on. */
      readonly quoted?: QuotedSpan;
    }
  | {
      readonly kind: "broken";
      readonly line: number;
      readonly lastLine?: number;
      readonly reason: string;
      /** For an over-long record: the 0-based field in which it crossed the limit, to name the column. */
      readonly column?: number;
    };

/** A quoted field that ran over line breaks: the line its quote opened on, and the line it closed on. */
export interface QuotedSpan {
  readonly opened: number;
  readonly closed: number;
}

/** Longest record accepted, in characters; a longer one is rejected as a row without buffering the file. */
export const MAX_CSV_RECORD_CHARS = 1_000_000;

const LF = 0x0a;
const CR = 0x0d;

type State = "fieldStart" | "unquoted" | "quoted" | "quoteInQuoted";

/** How a CSV file is split: its delimiter and quote (one character each) and the line it starts on. */
export interface CsvSplitOptions {
  /** `,` unless set. */
  readonly delimiter?: string;
  /** `"` unless set. */
  readonly quote?: string;
  /** Physical line of the text's first character, when lines above it were skipped (1 unless set). */
  readonly firstLine?: number;
  /** Split whole lines without quotes natively (false only to test it against the rest). */
  readonly lineFastPath?: boolean;
}

/**
 * Splits text into RFC 4180 records, chunk by chunk: quoted fields may hold delimiters, doubled quotes and
 * line breaks; the delimiter (`,`) and quote (`"`) may be other characters; records end with LF, CRLF or
 * a CR alone (Excel's "CSV (Macintosh)"), mixed in one file as they come; empty lines are skipped. Each of
 * the three ends one physical line, inside quotes too, where it is kept as data. A quote inside an
 * unquoted field is kept as text. A malformed or over-long record is reported alone and
 * reading goes on with the next one, so a bad row never hides the rows after it.
 * Own splitter, not csv-parse, whose skip_records_with_error loses every row after an over-long record:
 * see docs/csv-reader.md.
 */
export async function* csvRecords(
  text: AsyncIterable<string>,
  options: CsvSplitOptions = {},
): AsyncGenerator<CsvRecord> {
  for await (const batch of csvRecordBatches(text, options)) yield* batch;
}

/** The same records, one array per chunk of text: one await per chunk instead of one per record. */
export async function* csvRecordBatches(
  text: AsyncIterable<string>,
  options: CsvSplitOptions = {},
): AsyncGenerator<CsvRecord[]> {
  yield* splitRest(new CsvSplitter(options), text);
}

/** The records of the rest of the text through a splitter that may have been fed its start already. */
export async function* splitRest(
  splitter: CsvSplitter,
  text: AsyncIterable<string>,
): AsyncGenerator<CsvRecord[]> {
  for await (const chunk of text) {
    const batch: CsvRecord[] = [];
    splitter.push(chunk, batch);
    if (batch.length > 0) yield batch;
  }
  const last: CsvRecord[] = [];
  splitter.end(last);
  if (last.length > 0) yield last;
}

/** The splitter's state between chunks; `push` each chunk, then `end`. */
export class CsvSplitter {
  private state: State = "fieldStart";
  private fields: string[] = [];
  private field = "";
  private size = 0; // characters of the record so far, separators included
  private started = false; // the current record has begun (it is not an empty line)
  private startLine: number;
  private line: number; // physical line of the next character
  private textLine: number; // physical line of the last character that is no line break
  private quoteLine: number; // physical line of the quote that opened the current quoted field
  private pendingCr = false; // a CR ended the last chunk (and its line): is it half of a CRLF?
  /** A quote closed on line `closed` is followed by text: the quote opened on `opened` was stray or not doubled. */
  private problem: QuotedSpan | undefined;
  /** The record's first quoted field that held a line break, once closed. */
  private quoted: QuotedSpan | undefined;
  private oversized = false;
  private oversizedColumn = 0;

  private readonly lineFastPath: boolean;
  private readonly delimiter: string;
  private readonly quote: string;
  private readonly delimiterCode: number;
  private readonly quoteCode: number;

  constructor(options: CsvSplitOptions = {}) {
    this.lineFastPath = options.lineFastPath ?? true;
    this.delimiter = options.delimiter ?? ",";
    this.quote = options.quote ?? '"';
    this.delimiterCode = this.delimiter.charCodeAt(0);
    this.quoteCode = this.quote.charCodeAt(0);
    this.line = this.startLine = this.textLine = this.quoteLine = options.firstLine ?? 1;
    for (const [name, value] of [
      ["delimiter", this.delimiter],
      ["quote", this.quote],
    ] as const) {
      if (value.length !== 1 || value === "\n" || value === "\r")
        throw new InvariantError(
          `a CSV ${name} must be one character other than a line break, not ${JSON.stringify(value)}`,
        );
    }
    if (this.delimiter === this.quote)
      throw new InvariantError(
        `a CSV delimiter and quote must differ, not both ${JSON.stringify(this.quote)}`,
      );
  }

  /** The record being read is past the length limit: it will come out broken, whatever follows. */
  get overLimit(): boolean {
    return this.oversized;
  }

  push(chunk: string, out: CsvRecord[]): void {
    // Locals, not fields, in the loops below: the per-character cost stays that of constants.
    const QUOTE = this.quoteCode;
    const DELIMITER = this.delimiterCode;
    let i = 0;
    if (this.pendingCr && chunk.length > 0) {
      // The CR that ended the last chunk ended its line; an LF here is the rest of that CRLF.
      this.pendingCr = false;
      if (chunk.charCodeAt(0) === LF) {
        i = 1;
        if (this.state === "quoted") this.add("\n");
      }
    }
    const n = chunk.length;
    // Index of the next quote, LF and CR at or after i, or n when there is none; found again once passed.
    let nextQuote = -1;
    let nextLf = -1;
    let nextCr = -1;
    while (i < n) {
      if (this.lineFastPath && this.atRecordStart()) {
        if (nextQuote < i) nextQuote = indexOrEnd(chunk, this.quote, i);
        if (nextLf < i) nextLf = indexOrEnd(chunk, "\n", i);
        if (nextCr < i) nextCr = indexOrEnd(chunk, "\r", i);
        const eol = nextLf < nextCr ? nextLf : nextCr;
        if (eol < nextQuote && eol - i < MAX_CSV_RECORD_CHARS) {
          i = this.plainLine(chunk, i, eol, out);
          continue;
        }
      }
      if (this.state === "unquoted" || this.state === "quoted") {
        const quoted = this.state === "quoted";
        let j = i;
        for (; j < n; j++) {
          const c = chunk.charCodeAt(j);
          if (c === LF || c === CR || c === (quoted ? QUOTE : DELIMITER)) break;
        }
        if (j > i) this.textLine = this.line;
        this.add(chunk.slice(i, j));
        i = j;
        if (i === n) break;
      }
      const c = chunk.charCodeAt(i++);
      if (c !== LF && c !== CR) this.textLine = this.line;
      if (this.state === "quoted") {
        if (c === QUOTE) this.state = "quoteInQuoted";
        else {
          // A line break inside quotes is data, kept as written, and one physical line.
          this.add(c === CR ? "\r" : "\n");
          if (c === CR && this.restOfCrlf(chunk, i)) {
            this.add("\n");
            i++;
          }
          this.line++;
        }
      } else if (c === QUOTE && this.state === "fieldStart") {
        this.begin();
        this.state = "quoted";
        this.quoteLine = this.line;
      } else if (c === QUOTE && this.state === "quoteInQuoted") {
        this.add(this.quote);
        this.state = "quoted";
      } else if (c === DELIMITER) {
        this.begin();
        this.endField();
      } else if (c === LF) {
        this.lineEnd(out);
      } else if (c === CR) {
        if (this.restOfCrlf(chunk, i)) i++;
        this.lineEnd(out);
      } else {
        this.text(String.fromCharCode(c));
      }
    }
  }

  end(out: CsvRecord[]): void {
    this.pendingCr = false;
    if (this.state === "quoted") {
      const [line, lastLine] = [this.startLine, this.textLine];
      const reason =
        lastLine === line
          ? "has a quoted field that is never closed; every opening quote needs a closing quote"
          : `${span(line, lastLine)}: a quote opened on line ${this.quoteLine} is never closed before the ` +
            "end of the file; every opening quote needs a closing quote";
      out.push({ kind: "broken", line, ...lastLineOf(line, lastLine), reason });
    } else if (this.started) out.push(this.endRecord());
  }

  /** No part of a record is pending: the next character starts a line. */
  private atRecordStart(): boolean {
    return this.state === "fieldStart" && !this.started && !this.pendingCr;
  }

  /**
   * Whether the character at `at`, just after a CR, is that CR's LF. A CR that ends the chunk is noted
   * (`pendingCr`), so that an LF starting the next chunk is taken as its rest, not as another line.
   */
  private restOfCrlf(chunk: string, at: number): boolean {
    if (at === chunk.length) {
      this.pendingCr = true;
      return false;
    }
    return chunk.charCodeAt(at) === LF;
  }

  /**
   * A whole line [from, end) with no quote, shorter than the record limit, at the start of a record, ended
   * by the LF, CR or CRLF at `end`: its fields are exactly the text between delimiters, which the native
   * split finds far faster than the character loop. Returns where the next line starts.
   */
  private plainLine(chunk: string, from: number, end: number, out: CsvRecord[]): number {
    // An empty line is skipped, as in the character loop.
    if (end > from)
      out.push({ kind: "record", line: this.line, fields: chunk.slice(from, end).split(this.delimiter) });
    this.line++;
    return chunk.charCodeAt(end) === CR && this.restOfCrlf(chunk, end + 1) ? end + 2 : end + 1;
  }

  /** A line break outside quotes: ends the record, or is an empty line to skip. */
  private lineEnd(out: CsvRecord[]): void {
    const record = this.started ? this.endRecord() : undefined;
    this.line++;
    if (record !== undefined) out.push(record);
  }

  /** Ordinary text outside quotes; after a closing quote it means the quoting is broken. */
  private text(chars: string): void {
    this.begin();
    if (this.state === "quoteInQuoted") this.problem ??= { opened: this.quoteLine, closed: this.line };
    this.state = "unquoted";
    this.add(chars);
  }

  private begin(): void {
    if (this.started) return;
    this.started = true;
    this.startLine = this.line;
  }

  private add(chars: string): void {
    this.size += chars.length;
    if (this.oversized) return;
    this.field += chars;
    if (this.size > MAX_CSV_RECORD_CHARS) this.dropRecordText();
  }

  private endField(): void {
    if (this.state === "quoteInQuoted" && this.quoteLine < this.line)
      this.quoted ??= { opened: this.quoteLine, closed: this.line };
    if (!this.oversized) this.fields.push(this.field);
    this.field = "";
    this.state = "fieldStart";
    this.size++;
    if (this.size > MAX_CSV_RECORD_CHARS && !this.oversized) this.dropRecordText();
  }

  private dropRecordText(): void {
    this.oversized = true;
    this.oversizedColumn = this.fields.length;
    this.fields = [];
    this.field = "";
  }

  private endRecord(): CsvRecord {
    this.endField();
    const { fields, startLine: line, line: lastLine, oversized, problem, quoted } = this;
    this.fields = [];
    this.size = 0;
    this.started = false;
    this.problem = undefined;
    this.quoted = undefined;
    this.oversized = false;
    if (oversized) {
      const reason = `is longer than ${MAX_CSV_RECORD_CHARS} characters`;
      return { kind: "broken", line, ...lastLineOf(line, lastLine), reason, column: this.oversizedColumn };
    }
    if (problem !== undefined)
      return { kind: "broken", line, ...lastLineOf(line, lastLine), reason: this.quoteProblem(problem) };
    return {
      kind: "record",
      line,
      ...lastLineOf(line, lastLine),
      fields,
      ...(quoted === undefined ? {} : { quoted }),
    };
  }

  /**
   * A quote followed by text. On the line its field opened: a quote inside that was not doubled. Lines
   * later: a stray quote took every line up to the next quote into one field; the span is named, so no
   * line of it goes unaccounted for.
   */
  private quoteProblem(problem: QuotedSpan): string {
    if (problem.opened === problem.closed)
      return `has a quote inside a quoted field that is not doubled (${this.quote}${this.quote})`;
    return (
      `${span(this.startLine, this.line)}: a quote opened on line ${problem.opened} is never closed before ` +
      `line ${problem.closed}; every line between is read as one field (a stray quote on line ${problem.opened}?)`
    );
  }
}

function lastLineOf(line: number, lastLine: number): { lastLine?: number } {
  return lastLine > line ? { lastLine } : {};
}

/** `lines 3–51: one record of 49 lines`: how a record that took several lines is named. */
export function span(line: number, lastLine: number): string {
  return `lines ${line}–${lastLine}: one record of ${lastLine - line + 1} lines`;
}

/** The index of `text` in `chunk` at or after `from`, or the chunk's length when there is none. */
function indexOrEnd(chunk: string, text: string, from: number): number {
  const at = chunk.indexOf(text, from);
  return at === -1 ? chunk.length : at;
}
