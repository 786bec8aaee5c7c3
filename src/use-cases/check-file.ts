import { basename } from "node:path";
import type { EncodingChoice } from "../ingest/decode/decode-text.js";
import { formatFor, profileFor } from "../ingest/profiles/profile-match.js";
import type { SourceProfile } from "../ingest/profiles/source-profile.js";
import { firstNames, NAMES_LISTED } from "../ingest/listed-names.js";
import { readInvoiceFile, type FileFormat } from "../ingest/read-invoice-file.js";
import type { CsvHeaderInfo } from "../ingest/readers/csv.js";
import { formatFieldErrors } from "../invoice/field-error.js";
import { invoiceJson, type KeyNamespace } from "../invoice/key.js";
import { rowLines } from "../ingest/raw-item.js";

/** One rejected row, as the file's report will show it. */
export interface CheckedError {
  readonly line: number;
  readonly external_id: string | null;
  readonly error: string;
}

/** One canonical document, exactly as it would be sent, with its idempotency key. */
export interface CheckedDocument {
  readonly line: number;
  readonly idempotency_key: string;
  readonly body: string;
}

/**
 * What `invoice-relay check` learns of one file without Redis or the service (docs/vendor-files.md,
 * "Vendor files"). Counts are rows as the file's report would count them: `valid` rows would be sent, `duplicate`
 * and `conflict` repeat an earlier row of the same file (with the same content, or other content).
 */
export interface CheckedFile {
  readonly file: string;
  /** The source profile its name matched, as messages name it, or null. */
  readonly profile: string | null;
  readonly format: FileFormat;
  readonly encoding: { readonly name: string; readonly by: EncodingChoice["by"] } | null;
  /** CSV only: the delimiter, and whether it was detected or set by the profile. */
  readonly delimiter: { readonly value: string; readonly detected: boolean } | null;
  /**
   * CSV only: the header's physical line and each column with the field it fills (null: ignored), in
   * file order: every mapped column and the first ignored ones (NAMES_LISTED); `columns_left_out`
   * counts the ignored columns not listed.
   */
  readonly header: {
    readonly line: number;
    readonly columns: readonly (readonly [string, string | null])[];
    readonly columns_left_out: number;
  } | null;
  readonly rows: number;
  readonly valid: number;
  readonly rejected: number;
  readonly duplicate: number;
  readonly conflict: number;
  /** The first rejected rows (at most `maxErrors`), in file order. */
  readonly errors: readonly CheckedError[];
  /** The first `show` valid rows' documents. */
  readonly documents: readonly CheckedDocument[];
  /** The first unknown fields or columns (NAMES_LISTED), and how many more there are. */
  readonly unknown_fields: readonly string[];
  readonly unknown_fields_left_out: number;
  /** Why the file cannot be used at all (it would go to rejected/), or null. */
  readonly file_error: string | null;
}

export interface CheckOptions {
  readonly namespace: KeyNamespace;
  readonly profiles: readonly SourceProfile[];
  /** Documents to show. */
  readonly show: number;
  readonly maxErrors?: number;
}

/** `check`: reads one file exactly as ingest would (same profile, decoding, validation and keys). */
export async function checkFile(path: string, options: CheckOptions): Promise<CheckedFile> {
  const name = basename(path);
  const profile = profileFor(options.profiles, name);
  const format = formatFor(name, profile);
  let encoding: CheckedFile["encoding"] = null;
  let header: CsvHeaderInfo | undefined;
  const counts = { rows: 0, valid: 0, rejected: 0, duplicate: 0, conflict: 0 };
  const errors: CheckedError[] = [];
  const documents: CheckedDocument[] = [];
  let unknown: readonly string[] = [];
  let fileError: string | null = null;
  const items = readInvoiceFile(path, {
    namespace: options.namespace,
    format,
    profile,
    onEncoding: (choice) => {
      encoding = { name: choice.encoding, by: choice.by };
    },
    onCsvHeader: (found) => {
      header = found;
    },
  });
  for await (const item of items) {
    if (item.kind === "file-error") {
      fileError = item.error.message;
      continue;
    }
    if (item.kind === "unknown-fields") {
      unknown = item.names;
      continue;
    }
    const rows = item.kind === "rejected" ? rowLines(item) : 1;
    counts.rows += rows;
    counts[item.kind] += rows;
    if (item.kind === "rejected" && errors.length < (options.maxErrors ?? 20))
      errors.push({
        line: item.line,
        external_id: item.externalId ?? null,
        error: formatFieldErrors(item.errors),
      });
    if (item.kind === "valid" && documents.length < options.show)
      documents.push({ line: item.line, idempotency_key: item.key, body: invoiceJson(item.invoice) });
  }
  return {
    file: path,
    profile: profile?.name ?? null,
    format,
    encoding,
    delimiter: header === undefined ? null : { value: header.delimiter, detected: header.detected },
    header: header === undefined ? null : listedHeader(header),
    ...counts,
    errors,
    documents,
    unknown_fields: firstNames(unknown).names,
    unknown_fields_left_out: firstNames(unknown).leftOut,
    file_error: fileError,
  };
}

/** The header's columns as `check` lists them: every mapped one, and the first ignored ones. */
function listedHeader(header: CsvHeaderInfo): NonNullable<CheckedFile["header"]> {
  const ignored = header.columns.filter((c) => c.field === undefined).length;
  let ignoredListed = 0;
  const columns = header.columns.filter((c) => c.field !== undefined || ignoredListed++ < NAMES_LISTED);
  return {
    line: header.line,
    columns: columns.map((c) => [c.name, c.field ?? null] as const),
    columns_left_out: Math.max(0, ignored - NAMES_LISTED),
  };
}
