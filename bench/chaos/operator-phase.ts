import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FaultsPatch, SimulatorHandle } from "../../src/simulator/index.js";
import { expected, type ExpectedRow, type Fields } from "./drop-files.js";
import { describeExit, spawnEntry } from "./processes.js";
import { parseReportCsv } from "./report-csv.js";

/** Invoices of the operator's night; half of them are corrected before `retry`. */
const INVOICES = 200;
const HEADER = "external_id,currency,destination_country,archive_policy";

export interface OperatorInput {
  readonly sim: SimulatorHandle;
  readonly dropDir: string;
  /** REDIS_URL, QUEUE_PREFIX, the API and tuning: what `run` and `retry` need. */
  readonly env: Readonly<Record<string, string>>;
  /** The faults of the chaotic night, restored once the outage is over. */
  readonly faults: FaultsPatch;
  /** Effects per idempotency key, counted from the simulator's attempt events. */
  readonly effects: ReadonlyMap<string, number>;
  readonly log: (line: string) => void;
}

interface Version {
  readonly fields: Fields;
  readonly row: ExpectedRow;
}

const version = (i: number, policy: string, line: number): Version => {
  const fields = {
    external_id: `OPERATOR-${i.toString().padStart(5, "0")}`,
    currency: "EUR",
    destination_country: "DE",
    archive_policy: policy,
  };
  return { fields, row: expected(fields, line) };
};

/**
 * The night after the chaos, as an operator lives it: every invoice of a file fails through an outage;
 * corrected versions of half of them are dropped and sent; `retry` then re-drives the failed ones. The
 * outdated versions must never be sent beside the corrected ones (they end `superseded`), and every
 * external_id must take effect exactly once. Returns what failed, empty when all held.
 */
export async function operatorPhase(input: OperatorInput): Promise<string[]> {
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) failures.push(`operator phase: ${what}`);
  };
  const first = Array.from({ length: INVOICES }, (_, i) => version(i, "eu-10y", i + 2));
  const corrected = first
    .slice(0, INVOICES / 2)
    .map((v, i) => version(Number(v.fields.external_id.slice(-5)), "eu-7y", i + 2));
  const run = async (label: string, env: Readonly<Record<string, string>> = {}) => {
    const spawned = spawnEntry(label, "workers/cli.js", ["run", "--deadline", "300s"], {
      ...input.env,
      ...env,
    });
    const started = Date.now();
    const exit = await spawned.exited;
    input.log(`operator: ${label}: ${describeExit(exit)} after ${(Date.now() - started) / 1000} s`);
    return { code: exit.code, output: spawned.tail() };
  };

  // Night 2: the service is down all night, and every invoice of the file ends failed.
  await writeCsv(join(input.dropDir, "operator-night.csv"), first);
  input.sim.setFaults({ errorRate: 1, throttleRate: 0, lostRate: 0 });
  // One attempt each: a give-up is a final failure, which keeps the outage cool-down (seconds to a minute) out of it.
  const outage = await run("run through an outage", { MAX_ATTEMPTS: "1" });
  check(outage.code === 2, `the outage night ended with exit ${outage.code}, expected 2\n${outage.output}`);

  // The service is back (with the chaos faults); corrected versions of half of them are dropped.
  input.sim.setFaults(input.faults);
  await writeCsv(join(input.dropDir, "operator-corrections.csv"), corrected);
  const corrections = await run("run with the corrections");
  check(
    corrections.code === 0,
    `the corrections run ended with exit ${corrections.code}\n${corrections.output}`,
  );

  const retry = spawnEntry("retry", "workers/cli.js", ["retry"], input.env);
  const retried = await retry.exited;
  input.log(`operator: retry: ${describeExit(retried)}\n${retry.stdout().trimEnd().replace(/^/gm, "  ")}`);
  check(retried.code === 0, `retry ended with ${describeExit(retried)}`);
  const after = await run("run after retry");
  check(after.code === 0, `the run after retry ended with exit ${after.code}\n${after.output}`);

  // Exactly one effect per external_id: the corrected version where there is one, else the first.
  const wrong: string[] = [];
  for (const [i, v] of first.entries()) {
    const fix = corrected[i];
    const want = new Map([[v.row.key, fix === undefined ? 1 : 0]]);
    if (fix !== undefined) want.set(fix.row.key, 1);
    for (const [key, n] of want)
      if ((input.effects.get(key) ?? 0) !== n)
        wrong.push(`${v.fields.external_id} ${key}: ${input.effects.get(key) ?? 0} effect(s), expected ${n}`);
  }
  check(wrong.length === 0, `${wrong.length} wrong: ${wrong.slice(0, 5).join("; ")}`);
  check(
    input.sim.stats().effects.externalIdsWithMultipleEffects === 0,
    "an external_id took effect under two keys",
  );

  const night = await reportStatuses(input.dropDir, "operator-night.csv");
  const want = first.map((_, i) => (i < corrected.length ? "superseded" : "succeeded"));
  check(
    JSON.stringify(night) === JSON.stringify(want),
    `operator-night.csv report: ${summarise(night)}, expected ${summarise(want)}`,
  );
  const fixes = await reportStatuses(input.dropDir, "operator-corrections.csv");
  check(
    fixes.length === corrected.length && fixes.every((s) => s === "succeeded"),
    `operator-corrections.csv report: ${summarise(fixes)}`,
  );
  input.log(
    `operator: ${INVOICES} invoices failed in an outage, ${corrected.length} corrected and sent, ` +
      `${INVOICES - corrected.length} retried; ${failures.length === 0 ? "one effect per external_id" : "CHECKS FAILED"}`,
  );
  return failures;
}

async function writeCsv(path: string, versions: readonly Version[]): Promise<void> {
  const lines = versions.map(({ fields: f }) =>
    [f.external_id, f.currency, f.destination_country, f.archive_policy].join(","),
  );
  await writeFile(path, `${[HEADER, ...lines].join("\n")}\n`);
}

/** The statuses of a file's report, in line order. */
async function reportStatuses(dropDir: string, file: string): Promise<string[]> {
  const reports = join(dropDir, "reports");
  const name = (await readdir(reports)).find((n) => n.startsWith(`${file}.`) && n.endsWith(".results.csv"));
  if (name === undefined) return [];
  const { rows } = parseReportCsv(await readFile(join(reports, name), "utf8"));
  return rows.sort((a, b) => a.line - b.line).map((r) => r.status);
}

function summarise(statuses: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return JSON.stringify(Object.fromEntries(counts));
}
