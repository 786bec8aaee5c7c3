import { truncateValue, type FieldError } from "../../invoice/field-error.js";
import { normaliseFieldName, TOP_LEVEL, type FlatField, type PickedFields } from "../../invoice/normalise.js";
import type { RawItem } from "../raw-item.js";
import { UnreadableFileError } from "../unreadable-file-error.js";
import { csvRecordBatches, MAX_CSV_RECORD_CHARS, type CsvRecord } from "./csv-records.js";

type Target = FlatField;
// CSV columns are named like the flat fields of JSON records.
const COLUMNS = TOP_LEVEL;

const REQUIRED: readonly (readonly [Target, string])[] = [
  ["external_id", "external_id"],
  ["currency", "currency"],
  ["destination_country", "destination_country (or routing.destination_country)"],
  ["archive_policy", "archive_policy (or routing.archive_policy)"],
];

interface Header {
  readonly names: readonly string[];
  readonly width: number;
  /** Column index → field it fills, or undefined for an unknown column. */
  readonly targets: readonly (Target | undefined)[];
  readonly unknown: readonly string[];
}

function readHeader(file: string, names: readonly string[], line: number): Header {
  const targets = names.map((name) => COLUMNS.get(normaliseFieldName(name)));
  const present = new Set(targets);
  const missing = REQUIRED.filter(([target]) => !present.has(target)).map(([, label]) => label);
  if (missing.length > 0) {
    throw new UnreadableFileError(file, `the header lacks required column(s): ${missing.join(", ")}`, {
      line,
    });
  }
  const unknown = names.filter((_, i) => targets[i] === undefined);
  return { names, width: names.length, targets, unknown };
}

const NONE: readonly never[] = Object.freeze([]);

function pickRow(header: Header, row: readonly string[]): PickedFields {
  const fields: Partial<Record<Target, unknown>> = {};
  let errors: FieldError[] | undefined;
  for (let i = 0; i < row.length; i++) {
    const target = header.targets[i];
    if (target === undefined) continue;
    const value = row[i];
    const previous = fields[target];
    if (previous !== undefined && previous !== value) {
      (errors ??= []).push({
        field: target,
        value: truncateValue(value),
        reason: "appears in two columns with different values",
      });
    }
    fields[target] = value;
  }
  return { fields, unknown: NONE, errors: errors ?? NONE };
}

/** Why a row cannot be split; an over-long one names the column that took it over the limit. */
function brokenRowError(header: Header, record: Extract<CsvRecord, { kind: "broken" }>): FieldError {
  const name = record.column === undefined ? undefined : header.names[record.column];
  if (name === undefined) return { field: "(row)", reason: record.reason };
  return { field: name.trim(), reason: `makes the row longer than ${MAX_CSV_RECORD_CHARS} characters` };
}

/**
 * Reads CSV (RFC 4180: quoted commas, line breaks and doubled quotes; LF or CRLF; header matched
 * case-insensitively). A row with the wrong number of fields or broken quoting is rejected alone.
 */
export async function* readCsv(
  file: string,
  text: AsyncIterable<string>,
  onUnknownColumns: (names: readonly string[]) => void,
): AsyncGenerator<RawItem[]> {
  let header: Header | undefined;
  for await (const records of csvRecordBatches(text)) {
    const items: RawItem[] = [];
    for (const record of records) {
      if (header === undefined) {
        if (record.kind === "broken") {
          throw new UnreadableFileError(file, `the header row ${record.reason}`, { line: record.line });
        }
        header = readHeader(file, record.fields, record.line);
        if (header.unknown.length > 0) onUnknownColumns(header.unknown);
        continue;
      }
      const { line } = record;
      if (record.kind === "broken") {
        items.push({ kind: "invalid", line, errors: [brokenRowError(header, record)] });
      } else if (record.fields.length !== header.width) {
        const count = record.fields.length;
        const reason = `has ${count} field(s) but the header has ${header.width}; check for an unquoted comma or a missing value`;
        items.push({ kind: "invalid", line, errors: [{ field: "(row)", reason }] });
      } else {
        items.push({ kind: "fields", line, picked: pickRow(header, record.fields) });
      }
    }
    if (items.length > 0) yield items;
  }
  if (header === undefined)
    throw new UnreadableFileError(file, "the file is empty: a CSV file needs a header row");
}
