import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Queue } from "bullmq";
import { INVOICE_QUEUE } from "../../src/queue/invoice-queue.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { scanKeys, type RedisClient } from "../../src/ledger/redis-client.js";
import type { SimulatorStats } from "../../src/simulator/index.js";
import type { DropFile } from "./drop-files.js";
import { parseReportCsv, REPORT_HEADER, summarySchema, type ReportRow } from "./report-csv.js";

export interface VerifyInput {
  readonly dropDir: string;
  readonly files: readonly DropFile[];
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly stats: SimulatorStats;
  /** Effects per key, counted from the simulator's attempt events by the chaos process itself. */
  readonly effects: ReadonlyMap<string, number>;
}

export interface Verdict {
  readonly failures: string[];
  /** Valid rows that did not end with one effect, one succeeded record and one report line. */
  readonly lost: number;
  /** Effects beyond the first of a key. */
  readonly duplicates: number;
}

const LIST = 5; // how many offenders a failure names

/** Every check of the chaos suite (docs/reliability.md, "The chaos suite"); each one can fail, and says what it found. */
export async function verify(input: VerifyInput): Promise<Verdict> {
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) failures.push(what);
  };
  const expectedKeys = new Set(input.files.flatMap((f) => f.rows.map((r) => r.key)));
  const total = input.files.reduce((n, f) => n + f.rows.length, 0);
  check(
    expectedKeys.size === total,
    `the generator made ${total} rows but ${expectedKeys.size} distinct keys`,
  );
  const bad = new Set<string>();

  // The simulator: exactly one effect per valid row, none for anything else.
  const { effects } = input.stats;
  for (const key of expectedKeys) if ((input.effects.get(key) ?? 0) !== 1) bad.add(key);
  const noEffect = [...expectedKeys].filter((k) => (input.effects.get(k) ?? 0) === 0);
  const many = [...expectedKeys].filter((k) => (input.effects.get(k) ?? 0) > 1);
  const strangers = [...input.effects.keys()].filter((k) => !expectedKeys.has(k));
  check(noEffect.length === 0, `${noEffect.length} valid row(s) never took effect: ${names(noEffect)}`);
  check(many.length === 0, `${many.length} key(s) took effect more than once: ${names(many)}`);
  check(strangers.length === 0, `effects for keys of no row: ${names(strangers)}`);
  check(
    effects.total === total && effects.distinctKeys === total && effects.keysWithMultipleEffects === 0,
    `simulator ledger: ${effects.total} effects over ${effects.distinctKeys} keys (${effects.keysWithMultipleEffects} repeated); expected ${total} over ${total}`,
  );
  check(effects.externalIdsWithMultipleEffects === 0, "an external_id took effect under two keys");
  check(input.stats.keyReuseRejections === 0, "a key was sent with two different bodies (422)");
  check(input.stats.inFlight === 0, `${input.stats.inFlight} request(s) still in flight at the simulator`);

  await checkReports(input, check, bad);
  await checkFolders(input, check);
  await checkStore(input, expectedKeys, check, bad);
  await checkQueue(input, check);
  return { failures, lost: bad.size, duplicates: effects.total - effects.distinctKeys };
}

type Check = (ok: boolean, what: string) => void;

async function checkReports(input: VerifyInput, check: Check, bad: Set<string>): Promise<void> {
  const reports = join(input.dropDir, "reports");
  const present = await readdir(reports);
  for (const file of input.files) {
    const mine = (suffix: string) =>
      present.filter((n) => n.startsWith(`${file.name}.`) && n.endsWith(suffix) && !n.endsWith(".tmp"));
    const csvs = mine(".results.csv");
    const summaries = mine(".summary.json");
    check(csvs.length === 1, `${file.name}: ${csvs.length} results CSV(s), expected 1`);
    check(summaries.length === 1, `${file.name}: ${summaries.length} summary file(s), expected 1`);
    const [csv] = csvs;
    const [summaryName] = summaries;
    if (csv === undefined || summaryName === undefined) {
      for (const row of file.rows) bad.add(row.key);
      continue;
    }
    const { header, rows } = parseReportCsv(await readFile(join(reports, csv), "utf8"));
    check(header === REPORT_HEADER, `${csv}: header is "${header}"`);
    check(rows.length === file.rows.length, `${csv}: ${rows.length} lines for ${file.rows.length} rows`);
    const byLine = new Map<number, ReportRow[]>();
    for (const row of rows) byLine.set(row.line, [...(byLine.get(row.line) ?? []), row]);
    const wrong: string[] = [];
    for (const want of file.rows) {
      const got = byLine.get(want.line) ?? [];
      const row = got[0];
      const ok =
        got.length === 1 &&
        row !== undefined &&
        row.idempotency_key === want.key &&
        row.external_id === want.externalId &&
        row.status === "succeeded" &&
        row.http_status === "201" &&
        row.correlation_id !== "" &&
        Number(row.attempts) >= 1;
      if (!ok) {
        bad.add(want.key);
        wrong.push(`line ${want.line}: ${got.length === 0 ? "missing" : JSON.stringify(got)}`);
      }
    }
    check(wrong.length === 0, `${csv}: ${wrong.length} wrong line(s): ${wrong.slice(0, LIST).join("; ")}`);
    const summary = summarySchema.parse(JSON.parse(await readFile(join(reports, summaryName), "utf8")));
    const n = file.rows.length;
    check(
      summary.rows === n && summary.counts.succeeded === n,
      `${summaryName}: ${summary.rows} rows, counts ${JSON.stringify(summary.counts)}; expected ${n} succeeded`,
    );
  }
}

async function checkFolders(input: VerifyInput, check: Check): Promise<void> {
  const processing = await readdir(join(input.dropDir, "processing"));
  const archive = await readdir(join(input.dropDir, "archive"));
  const rejected = await readdir(join(input.dropDir, "rejected"));
  const top = (await readdir(input.dropDir, { withFileTypes: true })).filter((e) => e.isFile());
  check(processing.length === 0, `left in processing/: ${names(processing)}`);
  check(rejected.length === 0, `in rejected/: ${names(rejected)}`);
  check(archive.length === input.files.length, `archive/ holds ${archive.length} file(s): ${names(archive)}`);
  check(top.length === 0, `never claimed: ${names(top.map((e) => e.name))}`);
}

async function checkStore(
  input: VerifyInput,
  expectedKeys: ReadonlySet<string>,
  check: Check,
  bad: Set<string>,
): Promise<void> {
  const store = new RedisLedger(input.redis, input.prefix);
  const keys = [...expectedKeys];
  const notFinal: string[] = [];
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    const records = await store.getMany(chunk);
    chunk.forEach((key, j) => {
      if (records[j]?.status !== "succeeded") {
        notFinal.push(`${key}=${records[j]?.status ?? "none"}`);
        bad.add(key);
      }
    });
  }
  check(notFinal.length === 0, `${notFinal.length} record(s) not succeeded: ${names(notFinal)}`);
  // SCAN on every master of a cluster; a key SCAN returns twice is counted once.
  const found = new Set<string>();
  for await (const page of scanKeys(input.redis, store.names.record("*")))
    for (const key of page) found.add(key);
  const records = found.size;
  check(records === expectedKeys.size, `${records} result records for ${expectedKeys.size} keys`);
  const counts = await store.counts();
  check(
    counts.succeeded === expectedKeys.size && counts.queued + counts.retrying + counts.failed === 0,
    `results counts ${JSON.stringify(counts)}`,
  );
  const batches = new BatchStore(input.redis, input.prefix);
  const metas = await Promise.all((await batches.list()).map((id) => batches.require(id)));
  const files = new Set(metas.map((m) => m.file));
  check(
    metas.length === input.files.length && files.size === input.files.length,
    `${metas.length} batch(es) for ${input.files.length} files: ${names(metas.map((m) => `${m.file}:${m.id}`))}`,
  );
  const open = metas.filter((m) => m.state !== "reported");
  check(open.length === 0, `batches not reported: ${names(open.map((m) => `${m.id}=${m.state}`))}`);
}

async function checkQueue(input: VerifyInput, check: Check): Promise<void> {
  const queue = new Queue(INVOICE_QUEUE, { connection: input.redis, prefix: input.prefix });
  try {
    const counts = await queue.getJobCounts(
      "waiting",
      "active",
      "delayed",
      "prioritized",
      "waiting-children",
      "paused",
      "failed",
    );
    const left = Object.entries(counts).filter(([, n]) => n > 0);
    check(left.length === 0, `jobs left in BullMQ: ${JSON.stringify(Object.fromEntries(left))}`);
    check(!(await queue.isPaused()), "the queue is paused");
  } finally {
    await queue.close();
  }
}

function names(items: readonly string[]): string {
  return items.length === 0
    ? "none"
    : items.slice(0, LIST).join(", ") + (items.length > LIST ? ` (+${items.length - LIST} more)` : "");
}
