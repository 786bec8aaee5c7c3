import { cp, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseReportCsv, type ReportRow } from "../../bench/chaos/report-csv.js";

export async function tempDropDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "invoice-relay-drop-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

// One independent report parser for tests and the chaos suite, apart from the code that writes reports.
export {
  parseReportCsv as parseReport,
  summarySchema,
  type ReportRow as ReportLine,
} from "../../bench/chaos/report-csv.js";

/** All reports of a drop folder: the CSV rows and the summary of each, keyed by source file name. */
export async function readReports(
  dropDir: string,
): Promise<Map<string, { rows: ReportRow[]; header: string; summary: unknown }>> {
  const dir = join(dropDir, "reports");
  const names = await readdir(dir);
  const out = new Map<string, { rows: ReportRow[]; header: string; summary: unknown }>();
  for (const name of names.filter((n) => n.endsWith(".results.csv")).sort()) {
    const source = name.replace(/\.\d{8}T\d{6}Z-[0-9a-f]{6}\.results\.csv$/, "");
    const parsed = parseReportCsv(await readFile(join(dir, name), "utf8"));
    const summary: unknown = JSON.parse(
      await readFile(join(dir, name.replace(/\.results\.csv$/, ".summary.json")), "utf8"),
    );
    const key = out.has(source) ? `${source}#${out.size}` : source;
    out.set(key, { ...parsed, summary });
  }
  return out;
}

const SAMPLES_DIR = join(import.meta.dirname, "../../samples");

/** The bundled samples as `npm run demo` drops them: every data file of samples/ and its sources.yaml. */
export async function copySamples(dropDir: string): Promise<void> {
  await cp(join(SAMPLES_DIR, "sources.yaml"), join(dropDir, "sources.yaml"));
  for (const name of (await readdir(SAMPLES_DIR)).filter((n) => /\.(csv|json|ndjson)$/.test(n)))
    await cp(join(SAMPLES_DIR, name), join(dropDir, name));
}
