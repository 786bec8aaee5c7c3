import { parse, type CsvError } from "csv-parse";
import { Readable } from "node:stream";
import { truncateValue, type FieldError } from "../../invoice/field-error.js";
import { normaliseFieldName, type PickedFields } from "../../invoice/normalise.js";
import type { RawItem } from "../raw-item.js";
import { LineIndex } from "../line-index.js";
import { UnreadableFileError } from "../unreadable-file-error.js";

type Target =
  "external_id" | "currency" | "schema_version" | "document_type" | "destination_country" | "archive_policy";

const COLUMNS: ReadonlyMap<string, Target> = new Map<string, Target>([
  ["external_id", "external_id"],
  ["currency", "currency"],
  ["schema_version", "schema_version"],
  ["document_type", "document_type"],
  ["destination_country", "destination_country"],
  ["routing.destination_country", "destination_country"],
  ["archive_policy", "archive_policy"],
  ["routing.archive_policy", "archive_policy"],
]);

const REQUIRED: readonly (readonly [Target, string])[] = [
  ["external_id", "external_id"],
  ["currency", "currency"],
  ["destination_country", "destination_country (or routing.destination_country)"],
  ["archive_policy", "archive_policy (or routing.archive_policy)"],
];

/** Longest record accepted, in characters; a longer one is rejected as a row without buffering the file. */
export const MAX_CSV_RECORD_CHARS = 1_000_000;

interface Header {
  readonly width: number;
  /** Column index → field it fills, or undefined for an unknown column. */
  readonly targets: readonly (Target | undefined)[];
  readonly unknown: readonly string[];
}

function readHeader(file: string, names: readonly string[]): Header {
  const targets = names.map((name) => COLUMNS.get(normaliseFieldName(name)));
  const present = new Set(targets);
  const missing = REQUIRED.filter(([target]) => !present.has(target)).map(([, label]) => label);
  if (missing.length > 0) {
    throw new UnreadableFileError(file, `the header lacks required column(s): ${missing.join(", ")}`, {
      line: 1,
    });
  }
  const unknown = names.filter((_, i) => targets[i] === undefined);
  return { width: names.length, targets, unknown };
}

function pickRow(header: Header, row: readonly string[]): PickedFields {
  const fields: Partial<Record<Target, unknown>> = {};
  const errors: FieldError[] = [];
  for (let i = 0; i < row.length; i++) {
    const target = header.targets[i];
    if (target === undefined) continue;
    const value = row[i];
    const previous = fields[target];
    if (previous !== undefined && previous !== value) {
      errors.push({
        field: target,
        value: truncateValue(value),
        reason: "appears in two columns with different values",
      });
    }
    fields[target] = value;
  }
  return { fields, unknown: [], errors };
}

/** Line feeds inside a record's fields: the record started that many lines before the one it ends on. */
function lineFeedsIn(row: readonly string[]): number {
  let count = 0;
  for (const field of row) {
    for (let i = field.indexOf("\n"); i !== -1; i = field.indexOf("\n", i + 1)) count++;
  }
  return count;
}

interface RowMeta {
  readonly line: number;
  /** How many skipped (broken) rows came before this one, to keep the output in file order. */
  readonly skippedBefore: number;
}

/**
 * Reads CSV (RFC 4180: quoted commas, line breaks and doubled quotes; CRLF; header matched
 * case-insensitively). A row with the wrong number of fields or broken quoting is rejected alone.
 */
export async function* readCsv(
  file: string,
  chunks: AsyncIterable<Buffer>,
  onUnknownColumns: (names: readonly string[]) => void,
): AsyncGenerator<RawItem> {
  const skipped: RawItem[] = [];
  // csv-parse's own line count drifts on CRLF inside quoted fields, so lines come from byte offsets.
  const lines = new LineIndex();
  let lastEnd = 0;
  // on_record sees every record before it is read below, in the same order.
  const meta: RowMeta[] = [];
  let metaRead = 0;
  const parser = parse({
    relax_column_count: true,
    // A stray quote stays part of its field (and fails validation there): csv-parse's strict mode loses
    // its place after an invalid closing quote and would swallow the rows that follow.
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_CSV_RECORD_CHARS,
    on_record: (record: string[], context) => {
      lastEnd = context.bytes;
      meta.push({
        line: lines.lineAt(context.bytes - 1) - lineFeedsIn(record),
        skippedBefore: skipped.length,
      });
      return record;
    },
  });
  parser.on("skip", (error: CsvError) => {
    const line = lines.lineAt(lastEnd);
    skipped.push({ kind: "invalid", line, errors: [{ field: "(row)", reason: describeCsvError(error) }] });
  });
  async function* tracked(): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      lines.add(chunk);
      yield chunk;
    }
  }
  const input = Readable.from(tracked(), { objectMode: false });
  input.on("error", (error) => parser.destroy(error));
  input.pipe(parser);

  let header: Header | undefined;
  let emittedSkips = 0;
  for await (const record of parser as AsyncIterable<string[]>) {
    const { line, skippedBefore } = meta[metaRead++] ?? { line: 0, skippedBefore: 0 };
    if (metaRead > 4096) {
      meta.splice(0, metaRead);
      metaRead = 0;
    }
    while (emittedSkips < skippedBefore) yield skipped[emittedSkips++] as RawItem;
    if (header === undefined) {
      header = readHeader(file, record);
      if (header.unknown.length > 0) onUnknownColumns(header.unknown);
      continue;
    }
    if (record.length !== header.width) {
      const reason = `has ${record.length} field(s) but the header has ${header.width}; check for an unquoted comma or a missing value`;
      yield { kind: "invalid", line, errors: [{ field: "(row)", reason }] };
      continue;
    }
    yield { kind: "fields", line, picked: pickRow(header, record) };
  }
  while (emittedSkips < skipped.length) yield skipped[emittedSkips++] as RawItem;
  if (header === undefined)
    throw new UnreadableFileError(file, "the file is empty: a CSV file needs a header row");
}

function describeCsvError(error: CsvError): string {
  switch (error.code) {
    case "CSV_MAX_RECORD_SIZE":
      return `the record is longer than ${MAX_CSV_RECORD_CHARS} characters`;
    case "CSV_QUOTE_NOT_CLOSED":
      return "a quoted field is never closed; every opening quote needs a closing quote";
    case "CSV_INVALID_CLOSING_QUOTE":
      return 'a quote inside a quoted field must be doubled ("")';
    default:
      return `unreadable CSV row: ${error.message}`;
  }
}
