import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

export async function tempDropDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "invoice-relay-drop-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

const reportLineSchema = z.object({
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
export type ReportLine = z.infer<typeof reportLineSchema>;

/** Parses a report CSV (RFC 4180, as written by the report writer). */
export function parseReport(text: string): { header: string; rows: ReportLine[] } {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n") {
      record.push(field.replace(/\r$/, ""));
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  const [header = [], ...rest] = records;
  const names = header;
  const rows = rest.map((cells) =>
    reportLineSchema.parse(Object.fromEntries(names.map((n, i) => [n, cells[i] ?? ""]))),
  );
  return { header: names.join(","), rows };
}

/** All reports of a drop folder: the CSV rows and the summary of each, keyed by source file name. */
export async function readReports(
  dropDir: string,
): Promise<Map<string, { rows: ReportLine[]; header: string; summary: unknown }>> {
  const dir = join(dropDir, "reports");
  const names = await readdir(dir);
  const out = new Map<string, { rows: ReportLine[]; header: string; summary: unknown }>();
  for (const name of names.filter((n) => n.endsWith(".results.csv")).sort()) {
    const source = name.replace(/\.\d{8}T\d{6}Z-[0-9a-f]{6}\.results\.csv$/, "");
    const parsed = parseReport(await readFile(join(dir, name), "utf8"));
    const summary: unknown = JSON.parse(
      await readFile(join(dir, name.replace(/\.results\.csv$/, ".summary.json")), "utf8"),
    );
    const key = out.has(source) ? `${source}#${out.size}` : source;
    out.set(key, { ...parsed, summary });
  }
  return out;
}

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
