import { randomUUID } from "node:crypto";
import { lstat, mkdir, readFile, readdir, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import {
  BAD_FIXTURES_DIR,
  claimedPath,
  copyFixtures,
  CSV_HEADER,
  csvRow,
  fileSummarySchema,
  finalPlace,
  jsonRecord,
  sentAs,
  writeLargeCases,
} from "../support/bad-inputs.js";
import { readReports, tempDropDir, type ReportLine } from "../support/drop.js";
import { runCli, type CliResult } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";

const API_KEY = "irs_live_bad_input_e2e_key_0123456789";
/** How long a run may take before it is stopped as hung (a safeguard, not a measure of speed). */
const RUN_LIMIT_MS = 150_000;
let sim: SimulatorHandle;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 11 });
  cleanups.push(() => sim.close());
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface RunResult extends CliResult {
  readonly dir: string;
  readonly reports: Awaited<ReturnType<typeof readReports>>;
}

/** One `run` of the real CLI over a drop folder prepared by `fill`, against the shared simulator. */
async function runOver(fill: (dir: string) => Promise<void>): Promise<RunResult> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  await fill(drop.dir);
  const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "bad", dropDir: drop.dir });
  const result = await runCli(["run"], env, RUN_LIMIT_MS);
  return { ...result, dir: drop.dir, reports: await readReports(drop.dir) };
}

const rowsOf = (result: RunResult, name: string): readonly ReportLine[] =>
  result.reports.get(name)?.rows ?? [];
const outline = (rows: readonly ReportLine[]) => rows.map((r) => [r.line, r.status]);
const errorAt = (rows: readonly ReportLine[], line: number) => rows.find((r) => r.line === line)?.error;
const fileError = (result: RunResult, name: string) =>
  fileSummarySchema.parse(result.reports.get(name)?.summary).file_error;

const REJECTED_WHOLE = ["empty.csv", "empty.json", "empty.ndjson", "latin1.csv", "no-invoices.json"];
const PARTLY_BAD = [
  "unbalanced-quotes.csv",
  "nul-bytes.csv",
  "numbers-for-strings.json",
  "duplicate-headers.csv",
];
const GENERATED = ["10mb-field.csv", "1000-columns.csv", "deep-10000.json", "5mb-line.ndjson"];
const OUTSIDE_TEXT = `${CSV_HEADER}\n${csvRow("OUT-1")}\n`;

describe("run over a drop folder of bad input", () => {
  let result: RunResult;
  let outsideFile: string;

  beforeAll(async () => {
    result = await runOver(async (dir) => {
      await copyFixtures(dir, [...REJECTED_WHOLE, ...PARTLY_BAD]);
      await writeLargeCases(dir);
      const outside = join(dir, "..", `${randomUUID()}-outside`);
      await mkdir(outside);
      cleanups.push(() => rm(outside, { recursive: true, force: true }));
      outsideFile = join(outside, "outside.csv");
      await writeFile(outsideFile, OUTSIDE_TEXT);
      await symlink(outsideFile, join(dir, "link.csv"));
    });
  }, RUN_LIMIT_MS + 30_000);

  it("when every kind of bad input is dropped at once, then run exits 2 without a crash, and every file has its report", async () => {
    expect(result.code, result.output).toBe(2);
    expect(result.output).not.toMatch(/Unhandled|RangeError|TypeError|\n\s+at /);
    expect(await readdir(join(result.dir, "processing"))).toEqual([]);
    expect([...result.reports.keys()].sort()).toEqual(
      [...REJECTED_WHOLE, ...PARTLY_BAD, ...GENERATED, "link.csv"].sort(),
    );
  });

  it.each([
    ["empty.csv", "empty.csv: the file is empty: a CSV file needs a header row"],
    ["empty.json", "empty.json (line 1, column 1): the file is empty: expected a JSON array"],
    ["empty.ndjson", "empty.ndjson: the file is empty: NDJSON needs one JSON object per line"],
  ])(
    "when %s is an empty file, then it is kept in rejected/ with a summary naming it",
    async (name, text) => {
      expect(await finalPlace(result.dir, name)).toBe("rejected");
      expect(fileError(result, name)).toContain(text);
      expect(rowsOf(result, name)).toEqual([]);
    },
  );

  it("when a CSV has quotes that are not doubled or never closed, then those rows are rejected at their lines and the others are sent", async () => {
    const rows = rowsOf(result, "unbalanced-quotes.csv");
    expect(outline(rows)).toEqual([
      [2, "succeeded"],
      [3, "rejected"],
      [4, "succeeded"],
      [5, "rejected"],
    ]);
    expect(errorAt(rows, 3)).toBe('(row): has a quote inside a quoted field that is not doubled ("")');
    expect(errorAt(rows, 5)).toBe(
      "(row): has a quoted field that is never closed; every opening quote needs a closing quote",
    );
    expect(await finalPlace(result.dir, "unbalanced-quotes.csv")).toBe("archive");
  });

  it("when a CSV field is 10 MB long, then its row is rejected naming the column and the rows around it are sent", async () => {
    const rows = rowsOf(result, "10mb-field.csv");
    expect(outline(rows)).toEqual([
      [2, "succeeded"],
      [3, "rejected"],
      [4, "succeeded"],
    ]);
    expect(errorAt(rows, 3)).toBe("currency: makes the row longer than 1000000 characters");
    expect(await finalPlace(result.dir, "10mb-field.csv")).toBe("archive");
  });

  it("when a CSV has 1,000 columns, then full rows are sent and a row one field short is rejected at its line", async () => {
    const rows = rowsOf(result, "1000-columns.csv");
    expect(outline(rows)).toEqual([
      [2, "succeeded"],
      [3, "rejected"],
    ]);
    expect(errorAt(rows, 3)).toBe(
      "(row): has 999 field(s) but the header has 1000; check for an unquoted comma or a missing value",
    );
    expect(await finalPlace(result.dir, "1000-columns.csv")).toBe("archive");
  });

  it("when CSV fields hold NUL bytes, then those rows are rejected naming the field, the value shown escaped", async () => {
    const rows = rowsOf(result, "nul-bytes.csv");
    expect(outline(rows)).toEqual([
      [2, "succeeded"],
      [3, "rejected"],
      [4, "rejected"],
      [5, "succeeded"],
    ]);
    expect(errorAt(rows, 3)).toBe('external_id: must not contain control characters (got "NB-\\u00002")');
    expect(errorAt(rows, 4)).toMatch(/^routing\.destination_country: must be an assigned ISO 3166-1/);
    expect(errorAt(rows, 4)).toContain('(got "D\\u0000E")');
    expect(await finalPlace(result.dir, "nul-bytes.csv")).toBe("archive");
  });

  it("when a file holds Latin-1 bytes, then it is kept in rejected/ naming the line and byte offset, and none of it is sent", async () => {
    const bytes = await readFile(join(BAD_FIXTURES_DIR, "latin1.csv"));
    expect(fileError(result, "latin1.csv")).toBe(
      `latin1.csv (line 3, byte offset ${bytes.indexOf(0xe9)}): not UTF-8: invalid byte 0xe9; ` +
        "if the file is not UTF-8, name its encoding in a source profile (`encoding:` in SOURCES_FILE, " +
        "see docs/vendor-files.md, Vendor files). Fix the file, or its source profile, and drop it again.",
    );
    expect(await finalPlace(result.dir, "latin1.csv")).toBe("rejected");
    expect(sim.attempts(sentAs({ ...jsonRecord("L1-1") }).key)).toEqual([]);
  });

  it("when a JSON object has no invoices array, then the file is kept in rejected/ naming the line and column", async () => {
    expect(fileError(result, "no-invoices.json")).toBe(
      'no-invoices.json (line 1, column 1): the top-level object has no "invoices" array; ' +
        'expected [ ... ] or {"invoices": [ ... ]}. Fix the file and drop it again.',
    );
    expect(await finalPlace(result.dir, "no-invoices.json")).toBe("rejected");
  });

  it("when JSON is nested 10,000 deep, then those elements are rejected at their index and the others are sent", async () => {
    const rows = rowsOf(result, "deep-10000.json");
    expect(outline(rows)).toEqual([
      [1, "succeeded"],
      [2, "rejected"],
      [3, "rejected"],
      [4, "succeeded"],
      [5, "succeeded"],
    ]);
    expect(errorAt(rows, 2)).toBe('(element): must be a JSON object (got "[array of 1]")');
    expect(errorAt(rows, 3)).toBe('currency: must be a string, not a list (got "[array of 1]")');
    expect(await finalPlace(result.dir, "deep-10000.json")).toBe("archive");
  });

  it("when NDJSON lines are 5 MB long, then a valid one is sent and one with a 5 MB external_id is rejected naming the field", async () => {
    const rows = rowsOf(result, "5mb-line.ndjson");
    expect(outline(rows)).toEqual([
      [1, "succeeded"],
      [2, "succeeded"],
      [3, "rejected"],
      [4, "succeeded"],
    ]);
    expect(errorAt(rows, 3)).toMatch(/^external_id: must be at most 255 characters \(got "NL-3x+…"\)$/);
    expect(await finalPlace(result.dir, "5mb-line.ndjson")).toBe("archive");
  });

  it("when JSON has numbers where strings belong, then those records are rejected naming each field", async () => {
    const rows = rowsOf(result, "numbers-for-strings.json");
    expect(outline(rows)).toEqual([
      [1, "rejected"],
      [2, "succeeded"],
      [3, "rejected"],
    ]);
    expect(errorAt(rows, 1)).toContain('external_id: must be a string, not a number (got "12345")');
    expect(errorAt(rows, 1)).toContain('currency: must be a string, not a number (got "978")');
    expect(errorAt(rows, 3)).toContain(
      'routing.destination_country: must be a string, not a number (got "276")',
    );
    expect(errorAt(rows, 3)).toContain('routing.archive_policy: must be a string, not a number (got "10")');
    expect(await finalPlace(result.dir, "numbers-for-strings.json")).toBe("archive");
  });

  it("when a CSV header repeats a column, then a row agreeing in both is sent and one that disagrees is rejected naming the field", async () => {
    const rows = rowsOf(result, "duplicate-headers.csv");
    expect(outline(rows)).toEqual([
      [2, "succeeded"],
      [3, "rejected"],
    ]);
    expect(errorAt(rows, 3)).toBe('currency: appears in two columns with different values (got "USD")');
    expect(await finalPlace(result.dir, "duplicate-headers.csv")).toBe("archive");
  });

  it("when the drop folder holds a symlink to a file outside it, then the link is rejected unfollowed, the target is untouched and nothing of it is sent", async () => {
    expect(fileError(result, "link.csv")).toBe(
      "link.csv: is a symbolic link; links are not followed out of the drop folder, copy the file itself. " +
        "Fix the file and drop it again.",
    );
    const kept = await claimedPath(result.dir, "rejected", "link.csv");
    expect((await lstat(kept)).isSymbolicLink()).toBe(true);
    expect(await readlink(kept)).toBe(outsideFile);
    expect(await readFile(outsideFile, "utf8")).toBe(OUTSIDE_TEXT);
    expect((await stat(outsideFile)).isFile()).toBe(true);
    expect(sim.attempts(sentAs(jsonRecord("OUT-1")).key)).toEqual([]);
  });

  it("when the run is over, then the service saw exactly one effect per succeeded row and no other", () => {
    const succeeded = [...result.reports.values()]
      .flatMap((r) => r.rows)
      .filter((r) => r.status === "succeeded");
    expect(succeeded).toHaveLength(15); // the valid rows of the partly bad files above
    for (const row of succeeded) {
      expect(sim.attempts(row.idempotency_key).map((a) => a.outcome)).toEqual(["effect"]);
    }
    expect(sim.stats().effects).toMatchObject({ total: succeeded.length, keysWithMultipleEffects: 0 });
  });
});

describe("run over a drop folder of unusual but valid input", () => {
  const NAMES = ["emoji-rtl.csv", "a..b.csv", "facture été 2026.csv", "header-only.csv"];
  let result: RunResult;

  beforeAll(async () => {
    result = await runOver((dir) => copyFixtures(dir, NAMES));
  }, RUN_LIMIT_MS + 30_000);

  it("when file names hold spaces, unicode and '..', and a file has only a header, then run exits 0 and each file is archived with reports named after it", async () => {
    expect(result.code, result.output).toBe(0);
    for (const name of NAMES) expect(await finalPlace(result.dir, name)).toBe("archive");
    const reportNames = await readdir(join(result.dir, "reports"));
    for (const name of NAMES) {
      const own = reportNames
        .filter((n) => n.startsWith(`${name}.`))
        .map((n) => n.slice(name.length).replace(/^\.\d{8}T\d{6}Z-[0-9a-f]{6}\./, "."))
        .sort();
      expect(own, name).toEqual([".results.csv", ".summary.json"]);
    }
    expect(outline(rowsOf(result, "a..b.csv"))).toEqual([[2, "succeeded"]]);
    expect(outline(rowsOf(result, "facture été 2026.csv"))).toEqual([[2, "succeeded"]]);
    expect(rowsOf(result, "header-only.csv")).toEqual([]);
  });

  it("when external_ids hold emoji and right-to-left text, then they are sent byte for byte and reported unchanged", () => {
    const ids = ["🧾 INV-1 ✅", "חשבונית-2 فاتورة-٣"];
    const rows = rowsOf(result, "emoji-rtl.csv");
    expect(rows.map((r) => [r.external_id, r.status])).toEqual(ids.map((id) => [id, "succeeded"]));
    ids.forEach((id, i) => {
      const sent = sentAs({ ...jsonRecord(id), destination_country: i === 0 ? "DE" : "IL" });
      expect(rows[i]?.idempotency_key).toBe(sent.key);
      expect(sim.attempts(sent.key).map((a) => [a.status, a.bodySha256])).toEqual([[201, sent.bodySha256]]);
    });
  });
});
