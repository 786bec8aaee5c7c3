import { z } from "zod";

export const REPORT_HEADER =
  "line,external_id,idempotency_key,status,http_status,correlation_id,ruleset_version,attempts,error";

const reportRowSchema = z.object({
  line: z.coerce.number().int(),
  external_id: z.string(),
  idempotency_key: z.string(),
  status: z.string(),
  http_status: z.string(),
  correlation_id: z.string(),
  ruleset_version: z.string(),
  attempts: z.string(),
  error: z.string(),
});
export type ReportRow = z.infer<typeof reportRowSchema>;

export const summarySchema = z.object({
  file: z.string(),
  batch_id: z.string(),
  rows: z.number(),
  counts: z.object({
    succeeded: z.number(),
    duplicate: z.number(),
    rejected: z.number(),
    failed: z.number(),
    conflict: z.number(),
  }),
});

/**
 * Parses RFC 4180 CSV into its records (the header first), on its own, so a writer bug is not hidden by
 * a shared reader. `crlf`: every line must end with CRLF (else a bare LF or CRLF ends a line).
 */
function parseCsvRecords(text: string, { crlf = false } = {}): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"' && text.charAt(i + 1) === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n") {
      if (crlf && text.charAt(i - 1) !== "\r")
        throw new Error(`line ${records.length + 1} does not end with CRLF`);
      record.push(field.endsWith("\r") ? field.slice(0, -1) : field);
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || record.length > 0)
    throw new Error(`the CSV does not end with ${crlf ? "CRLF" : "a line break"}`);
  return records;
}

/** The rows after the header, keyed by the header's names. */
function keyed([names = [], ...rest]: readonly string[][]): Record<string, string>[] {
  return rest.map((cells) => Object.fromEntries(names.map((n, i) => [n, cells[i] ?? ""])));
}

/** The rows of a CSV keyed by its header's names (see parseCsvRecords). */
export function parseCsvObjects(text: string, options: { crlf?: boolean } = {}): Record<string, string>[] {
  return keyed(parseCsvRecords(text, options));
}

/** Parses a results CSV (RFC 4180, CRLF), its header and its rows. */
export function parseReportCsv(text: string): { header: string; rows: ReportRow[] } {
  const records = parseCsvRecords(text);
  return {
    header: (records[0] ?? []).join(","),
    rows: keyed(records).map((row) => reportRowSchema.parse(row)),
  };
}
