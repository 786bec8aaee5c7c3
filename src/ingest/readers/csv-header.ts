import { normaliseFieldName, TOP_LEVEL, type FlatField } from "../../invoice/normalise.js";
import { UnreadableFileError, type FixIn } from "../unreadable-file-error.js";

/** The fields a CSV header must fill, as messages name them. */
const REQUIRED: readonly (readonly [FlatField, string])[] = [
  ["external_id", "external_id"],
  ["currency", "currency"],
  ["destination_country", "destination_country (or routing.destination_country)"],
  ["archive_policy", "archive_policy (or routing.archive_policy)"],
];
export const REQUIRED_COUNT = REQUIRED.length;

/** A CSV header read against the known column names and a source profile's `columns`. */
export interface CsvHeader {
  readonly names: readonly string[];
  readonly width: number;
  /** Column index → field it fills, or undefined for an unknown column. */
  readonly targets: readonly (FlatField | undefined)[];
  /** Column index → its name (trimmed) when the profile's `columns` mapped it, for errors. */
  readonly mapped: readonly (string | undefined)[];
  /** Field → the mapped column that fills it (PickedFields.columns). */
  readonly columns: Readonly<Partial<Record<FlatField, string>>>;
  readonly unknown: readonly string[];
  /** Required fields no column fills, as messages name them; empty for a usable header. */
  readonly missing: readonly string[];
}

/** What a source profile says about a CSV header. */
export interface HeaderMapping {
  /** Header names, trimmed and lower-cased → the field each fills. */
  readonly columns: ReadonlyMap<string, FlatField>;
  /** Fields the profile's `defaults` fill: a header may lack their columns. */
  readonly defaulted: ReadonlySet<FlatField>;
}

/**
 * Matches header names: a profile's `columns` first, then the flat field names (docs/vendor-files.md,
 * "Records"). A required field counts as present when a column fills it or the profile has a default for
 * it. Never throws.
 */
export function matchHeader(names: readonly string[], mapping: HeaderMapping): CsvHeader {
  const targets: (FlatField | undefined)[] = [];
  const mapped: (string | undefined)[] = [];
  const columns: Partial<Record<FlatField, string>> = {};
  for (const name of names) {
    const lower = normaliseFieldName(name);
    const byProfile = mapping.columns.get(lower);
    targets.push(byProfile ?? TOP_LEVEL.get(lower));
    mapped.push(byProfile === undefined ? undefined : name.trim());
    if (byProfile !== undefined) columns[byProfile] ??= name.trim();
  }
  const present = new Set<FlatField | undefined>([...targets, ...mapping.defaulted]);
  const missing = REQUIRED.filter(([target]) => !present.has(target)).map(([, label]) => label);
  const unknown = names.filter((_, i) => targets[i] === undefined);
  return { names, width: names.length, targets, mapped, columns: Object.freeze(columns), unknown, missing };
}

/**
 * The header, or UnreadableFileError naming the required columns it lacks (and `why`, if given; `fixIn`
 * says whether `why` names the source profile setting the header was split by).
 */
export function readHeader(
  file: string,
  names: readonly string[],
  line: number,
  mapping: HeaderMapping,
  why = "",
  fixIn: FixIn = "file",
): CsvHeader {
  const header = matchHeader(names, mapping);
  if (header.missing.length > 0) throw lacksColumns(file, header, line, why, fixIn);
  return header;
}

export function lacksColumns(
  file: string,
  header: CsvHeader,
  line: number,
  why: string,
  fixIn: FixIn = "file",
): UnreadableFileError {
  const problem = `the header lacks required column(s): ${header.missing.join(", ")}${why}`;
  return new UnreadableFileError(file, problem, { line }, fixIn);
}
