import { DELIMITERS } from "../profiles/source-profile.js";
import { UnreadableFileError, type FixIn } from "../unreadable-file-error.js";
import { matchHeader, REQUIRED_COUNT, type HeaderMapping } from "./csv-header.js";
import { CsvSplitter, MAX_CSV_RECORD_CHARS, type CsvRecord } from "./csv-records.js";

/** Where docs/vendor-files.md tells how to set a file's delimiter and column names. */
export const PROFILE_HINT = `a source profile for the file (SOURCES_FILE; docs/vendor-files.md, "Vendor files")`;

/** A delimiter as messages show it. */
export function showDelimiter(delimiter: string): string {
  return delimiter === "\t" ? "tab" : JSON.stringify(delimiter);
}

function showList(delimiters: readonly string[]): string {
  const shown = delimiters.map(showDelimiter);
  return shown.length < 2 ? shown.join("") : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1) ?? ""}`;
}

interface Candidate {
  readonly delimiter: string;
  readonly splitter: CsvSplitter;
  /** Records split so far, kept until one delimiter is chosen. */
  readonly records: CsvRecord[];
}

/** Whether the candidate's header (its first record) is known, or will come out over-long. */
function decided(candidate: Candidate): boolean {
  return candidate.records.length > 0 || candidate.splitter.overLimit;
}

/**
 * Splits CSV text with the delimiter its header shows: the header is split with each of `,` `;` tab `|`
 * (DELIMITERS) and the one whose names fill every required field (through the profile's `columns`, if
 * any) is used for the file. Several or none: the file is rejected, naming the delimiters tried and the
 * setting that says which one to use. Only the text up to the end of the header (at most one record's
 * limit) is split more than once; then the chosen splitter goes on alone.
 */
export async function* detectedRecordBatches(
  file: string,
  text: AsyncIterable<string>,
  options: {
    readonly quote?: string | undefined;
    readonly firstLine: number;
    readonly mapping: HeaderMapping;
    readonly onDelimiter: (delimiter: string) => void;
  },
): AsyncGenerator<CsvRecord[]> {
  const { quote, firstLine, mapping } = options;
  const candidates: Candidate[] = DELIMITERS.map((delimiter) => ({
    delimiter,
    splitter: new CsvSplitter({ delimiter, firstLine, ...(quote === undefined ? {} : { quote }) }),
    records: [],
  }));
  let chosen: Candidate | undefined;
  for await (const chunk of text) {
    if (chosen !== undefined) {
      const batch: CsvRecord[] = [];
      chosen.splitter.push(chunk, batch);
      if (batch.length > 0) yield batch;
      continue;
    }
    for (const candidate of candidates) candidate.splitter.push(chunk, candidate.records);
    if (!candidates.every(decided)) continue;
    chosen = choose(file, candidates, mapping);
    options.onDelimiter(chosen.delimiter);
    if (chosen.records.length > 0) yield chosen.records.splice(0);
  }
  if (chosen === undefined) {
    for (const candidate of candidates) candidate.splitter.end(candidate.records);
    // No record with any delimiter: an empty file, which the reader rejects as such.
    if (candidates.every((candidate) => candidate.records.length === 0)) return;
    chosen = choose(file, candidates, mapping);
    options.onDelimiter(chosen.delimiter);
    yield chosen.records;
    return;
  }
  const last: CsvRecord[] = [];
  chosen.splitter.end(last);
  if (last.length > 0) yield last;
}

type Reading =
  | { readonly kind: "fills"; readonly line: number }
  | { readonly kind: "lacks"; readonly line: number; readonly missing: readonly string[] }
  | { readonly kind: "broken"; readonly line: number | undefined; readonly reason: string };

function readingOf(candidate: Candidate, mapping: HeaderMapping): Reading {
  const header = candidate.records[0];
  if (header === undefined) {
    return { kind: "broken", line: undefined, reason: `is longer than ${MAX_CSV_RECORD_CHARS} characters` };
  }
  if (header.kind === "broken") return { kind: "broken", line: header.line, reason: header.reason };
  const { missing } = matchHeader(header.fields, mapping);
  return missing.length === 0
    ? { kind: "fills", line: header.line }
    : { kind: "lacks", line: header.line, missing };
}

/** The one candidate whose header fills every required field, or why there is not exactly one. */
function choose(file: string, candidates: readonly Candidate[], mapping: HeaderMapping): Candidate {
  const readings = candidates.map((candidate) => readingOf(candidate, mapping));
  const tried = showList(candidates.map((c) => c.delimiter));
  const filling = candidates.filter((_, i) => readings[i]?.kind === "fills");
  const [first] = filling;
  if (first !== undefined && filling.length === 1) return first;
  if (first !== undefined) {
    const line = readings[candidates.indexOf(first)]?.line;
    const problem =
      `the header has every required column when split at ${showList(filling.map((c) => c.delimiter))} ` +
      `(tried ${tried}), so which one the file uses is not clear. ` +
      `Set "delimiter:" in ${PROFILE_HINT}`;
    throw new UnreadableFileError(file, problem, line === undefined ? {} : { line }, "file-or-profile");
  }
  // None fills them: name what is missing with the delimiter that finds the most.
  let best: (Reading & { kind: "lacks" }) | undefined;
  let bestAt = 0;
  readings.forEach((reading, i) => {
    if (reading.kind === "lacks" && (best === undefined || reading.missing.length < best.missing.length)) {
      best = reading;
      bestAt = i;
    }
  });
  const broken = readings.find((reading) => reading.kind === "broken");
  // A header no delimiter splits into even one required column is more likely broken than lacking.
  if (best !== undefined && (broken === undefined || best.missing.length < REQUIRED_COUNT)) {
    const problem =
      `the header lacks required column(s): ${best.missing.join(", ")} ` +
      `(split at ${showDelimiter(candidates[bestAt]?.delimiter ?? ",")}, which finds the most of them; ` +
      `tried ${tried}). If the file uses another delimiter, set "delimiter:", or map its column names ` +
      `with "columns:", in ${PROFILE_HINT}`;
    return throwAt(file, problem, best.line, "file-or-profile");
  }
  return throwAt(
    file,
    `the header row ${broken?.reason ?? "cannot be split into fields"}`,
    broken?.line,
    "file",
  );
}

function throwAt(file: string, problem: string, line: number | undefined, fixIn: FixIn): never {
  throw new UnreadableFileError(file, problem, line === undefined ? {} : { line }, fixIn);
}
