import { truncateValue, type FieldError } from "../../invoice/field-error.js";
import type { FlatField, PickedFields } from "../../invoice/normalise.js";
import type { SourceProfile } from "../profiles/source-profile.js";
import type { RawItem } from "../raw-item.js";
import { UnreadableFileError } from "../unreadable-file-error.js";
import { detectedRecordBatches, showDelimiter } from "./csv-delimiter.js";
import { readHeader, type CsvHeader } from "./csv-header.js";
import { afterLines } from "./csv-preamble.js";
import { csvRecordBatches, MAX_CSV_RECORD_CHARS, span, type CsvRecord } from "./csv-records.js";
import { readerProfile, type ReaderProfile } from "./reader-profile.js";

/** What the CSV reader found in a file's header: for `invoice-relay check` and logs. */
export interface CsvHeaderInfo {
  readonly delimiter: string;
  /** True when detected from the header, false when the source profile set it. */
  readonly detected: boolean;
  readonly quote: string;
  /** Physical line of the header in the file. */
  readonly line: number;
  /** Each column as the file names it, and the field it fills (undefined: unknown, ignored). */
  readonly columns: readonly { readonly name: string; readonly field: FlatField | undefined }[];
}

export interface CsvReadOptions {
  /** The source profile matched by the file's name, if any. */
  readonly profile?: SourceProfile | undefined;
  readonly onUnknownColumns: (names: readonly string[]) => void;
  /** Called once, when the header has been read and accepted. */
  readonly onHeader?: ((header: CsvHeaderInfo) => void) | undefined;
}

const NONE: readonly never[] = Object.freeze([]);

function pickRow(header: CsvHeader, row: readonly string[]): PickedFields {
  const fields: Partial<Record<FlatField, unknown>> = {};
  let errors: FieldError[] | undefined;
  for (let i = 0; i < row.length; i++) {
    const target = header.targets[i];
    if (target === undefined) continue;
    const value = row[i];
    const previous = fields[target];
    if (previous !== undefined && previous !== value) {
      const column = header.mapped[i];
      const error: FieldError = {
        field: target,
        value: truncateValue(value),
        reason: "appears in two columns with different values",
      };
      (errors ??= []).push(column === undefined ? error : { ...error, column });
    }
    fields[target] = value;
  }
  return { fields, unknown: NONE, errors: errors ?? NONE, columns: header.columns };
}

/** Why a row cannot be split; an over-long one names the column that took it over the limit. */
function brokenRowError(header: CsvHeader, record: Extract<CsvRecord, { kind: "broken" }>): FieldError {
  const name = record.column === undefined ? undefined : header.names[record.column];
  if (name === undefined) return { field: "(row)", reason: record.reason };
  return { field: name.trim(), reason: `makes the row longer than ${MAX_CSV_RECORD_CHARS} characters` };
}

/** The records, split with the profile's delimiter or the one the header shows. */
function records(
  file: string,
  text: AsyncIterable<string>,
  profile: ReaderProfile,
  found: { delimiter: string; detected: boolean },
): AsyncGenerator<CsvRecord[]> {
  const lines =
    profile.preambleLines === 0 ? text : afterLines(file, text, profile.preambleLines, profile.name);
  const firstLine = profile.preambleLines + 1;
  const quote = profile.quote === undefined ? {} : { quote: profile.quote };
  if (profile.delimiter !== undefined) {
    found.delimiter = profile.delimiter;
    return csvRecordBatches(lines, { delimiter: profile.delimiter, firstLine, ...quote });
  }
  return detectedRecordBatches(file, lines, {
    ...quote,
    firstLine,
    mapping: profile.mapping,
    onDelimiter: (delimiter) => {
      found.delimiter = delimiter;
      found.detected = true;
    },
  });
}

/** How a row with the wrong number of fields is explained: the delimiter is the likely cause. */
function unquotedDelimiter(delimiter: string): string {
  return delimiter === "," ? "comma" : `delimiter (${showDelimiter(delimiter)})`;
}

/**
 * Reads CSV (RFC 4180: quoted delimiters, line breaks and doubled quotes; LF, CRLF or CR; header matched
 * case-insensitively), with the delimiter, quote, header line and column names of the source profile,
 * if any; without one the delimiter is detected from the header. A row with the wrong number of fields
 * or broken quoting is rejected alone.
 */
export async function* readCsv(
  file: string,
  text: AsyncIterable<string>,
  options: CsvReadOptions,
): AsyncGenerator<RawItem[]> {
  const profile = readerProfile(options.profile);
  const found = { delimiter: ",", detected: false };
  let header: CsvHeader | undefined;
  let wrongWidth = "";
  for await (const batch of records(file, text, profile, found)) {
    const items: RawItem[] = [];
    for (const record of batch) {
      if (header === undefined) {
        if (record.kind === "broken") {
          throw new UnreadableFileError(file, `the header row ${record.reason}`, { line: record.line });
        }
        const why = found.detected
          ? ""
          : ` (split at ${showDelimiter(found.delimiter)}, the delimiter ${profile.name} sets)`;
        const fixIn = found.detected ? "file" : "file-or-profile";
        header = readHeader(file, record.fields, record.line, profile.mapping, why, fixIn);
        wrongWidth = `but the header has ${header.width}; check for an unquoted ${unquotedDelimiter(found.delimiter)} or a missing value`;
        if (header.unknown.length > 0) options.onUnknownColumns(header.unknown);
        options.onHeader?.(headerInfo(header, record.line, found, profile));
        continue;
      }
      const { line } = record;
      // A record that cannot be split names every line it took, and counts for each (rowLines).
      const lines = record.lastLine === undefined ? {} : { lines: record.lastLine - line + 1 };
      if (record.kind === "broken") {
        items.push({ kind: "invalid", line, errors: [brokenRowError(header, record)], ...lines });
      } else if (record.fields.length !== header.width) {
        const spanned = record.lastLine === undefined ? "" : `${span(line, record.lastLine)}: `;
        const reason = `${spanned}has ${record.fields.length} field(s) ${wrongWidth}`;
        items.push({ kind: "invalid", line, errors: [{ field: "(row)", reason }], ...lines });
      } else {
        const picked = profile.apply(pickRow(header, record.fields));
        items.push({ kind: "fields", line, picked, ...spanOf(record) });
      }
    }
    if (items.length > 0) yield items;
  }
  if (header === undefined) {
    const where =
      profile.preambleLines === 0
        ? ""
        : ` at or after line ${profile.preambleLines + 1}, where ${profile.name} puts it (header_row)`;
    const fixIn = profile.preambleLines === 0 ? "file" : "file-or-profile";
    throw new UnreadableFileError(
      file,
      `the file is empty: a CSV file needs a header row${where}`,
      {},
      fixIn,
    );
  }
}

function headerInfo(
  header: CsvHeader,
  line: number,
  found: { readonly delimiter: string; readonly detected: boolean },
  profile: ReaderProfile,
): CsvHeaderInfo {
  return {
    delimiter: found.delimiter,
    detected: found.detected,
    quote: profile.quote ?? '"',
    line,
    columns: header.names.map((name, i) => ({ name, field: header.targets[i] })),
  };
}

/**
 * A record that splits but took several lines: if it is rejected, what names its lines and how many rows
 * it counts for, since a stray quote closed just before a delimiter reads every line between as one field.
 */
function spanOf(record: CsvRecord & { kind: "record" }): Pick<RawItem & { kind: "fields" }, "span"> {
  const { line, lastLine, quoted } = record;
  if (lastLine === undefined || quoted === undefined) return {};
  const reason =
    `${span(line, lastLine)}: a quote opened on line ${quoted.opened} is closed on line ${quoted.closed}; ` +
    `every line between is read as one field (a stray quote on line ${quoted.opened}?)`;
  return { span: { lines: lastLine - line + 1, error: { field: "(row)", reason } } };
}
