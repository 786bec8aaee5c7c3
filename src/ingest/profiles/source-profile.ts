import type { FlatField } from "../../invoice/normalise.js";
import type { FileFormat } from "../../ledger/statuses.js";

/** Encodings a profile may name; files without a BOM and without a profile are UTF-8. */
export const ENCODINGS = [
  "utf-8",
  "utf-16le",
  "utf-16be",
  "windows-1252",
  "iso-8859-1",
  "iso-8859-15",
] as const;
export type Encoding = (typeof ENCODINGS)[number];

/**
 * How report files are written (REPORT_ENCODING, or a profile's `report_encoding:`): UTF-8, or UTF-8
 * starting with a byte order mark, by which a spreadsheet (Excel) tells UTF-8 from its legacy code page.
 */
export const REPORT_ENCODINGS = ["utf-8", "utf-8-bom"] as const;
export type ReportEncoding = (typeof REPORT_ENCODINGS)[number];

/** Delimiters tried, in this order, when neither a profile nor anything else says which one a CSV uses. */
export const DELIMITERS = [",", ";", "\t", "|"] as const;

/**
 * A source profile as the readers use it (docs/vendor-files.md, "Vendor files"; docs/configuration.md, "Source
 * profiles"): how one vendor's files are read and mapped onto the canonical fields. Loaded and
 * validated from SOURCES_FILE by src/ingest/profiles/load-profiles.ts; every field but `name` and `match`
 * is optional, and what is absent is detected or taken as for a file without a profile.
 */
export interface SourceProfile {
  /** How messages and summaries name it, e.g. `sources.yaml, profile 1 ("sap-*.csv")`. */
  readonly name: string;
  /** The glob on the file name that selected it. */
  readonly match: string;
  readonly format?: FileFormat;
  /** One character; otherwise detected from the header line. */
  readonly delimiter?: string;
  /** One character; `"` otherwise. */
  readonly quote?: string;
  /** Otherwise UTF-8, or what a BOM says. */
  readonly encoding?: Encoding;
  /** 1-based physical line of the CSV header; the lines above it are skipped. */
  readonly headerRow?: number;
  /** How the reports of its files are written; REPORT_ENCODING otherwise. */
  readonly reportEncoding?: ReportEncoding;
  /**
   * Source column → canonical field: a CSV header name (matched trimmed and case-insensitively), or a
   * dotted path into JSON objects (`invoice.number`). Columns not named here are matched as without a
   * profile.
   */
  readonly columns: ReadonlyMap<string, FlatField>;
  /** A value for a canonical field the file lacks (absent or empty). */
  readonly defaults: Readonly<Partial<Record<FlatField, string>>>;
  /** Per canonical field, the vendor's words → ours (matched exactly after trimming). */
  readonly values: ReadonlyMap<FlatField, ReadonlyMap<string, string>>;
}

/** How a profile reads its files (and writes their reports): the optional fields of SourceProfile before its mapping. */
export type ReadingOptions = Pick<
  SourceProfile,
  "format" | "delimiter" | "quote" | "encoding" | "headerRow" | "reportEncoding"
>;

/** The reading options that are set, and only those: an option left out is detected, never `undefined`. */
export function readingOptions(given: {
  readonly [K in keyof ReadingOptions]?: ReadingOptions[K] | undefined;
}): ReadingOptions {
  return {
    ...(given.format === undefined ? {} : { format: given.format }),
    ...(given.delimiter === undefined ? {} : { delimiter: given.delimiter }),
    ...(given.quote === undefined ? {} : { quote: given.quote }),
    ...(given.encoding === undefined ? {} : { encoding: given.encoding }),
    ...(given.headerRow === undefined ? {} : { headerRow: given.headerRow }),
    ...(given.reportEncoding === undefined ? {} : { reportEncoding: given.reportEncoding }),
  };
}
