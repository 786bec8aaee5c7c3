import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { z } from "zod";
import { PostgresServer } from "../../src/dev/postgres-server.js";
import { outboxBacklog } from "../../src/ledger/outbox-backlog.js";
import { LedgerNames } from "../../src/ledger/names.js";
import type { RedisClient } from "../../src/ledger/redis-client.js";
import { silentLogger } from "../../src/log/logger.js";
import { EXPORT_GROUP } from "../../src/records/exporter.js";
import { migrate } from "../../src/records/migrations.js";
import { readEntry } from "../../src/records/outbox-events.js";
import { openPool } from "../../src/records/pool.js";
import type { FaultsPatch, SimulatorHandle } from "../../src/simulator/index.js";
import { mulberry32 } from "../../src/simulator/prng.js";
import { expected, type ExpectedRow } from "./drop-files.js";
import { compareWithReports } from "./export-check.js";
import { parseReportCsv } from "./report-csv.js";
import { describeExit, spawnEntry, type Spawned } from "./processes.js";

/** Invoices per file: the first file's report takes two `rows` events, the second's one. */
const FILES = [1200, 300] as const;
const HEADER = "external_id,currency,destination_country,archive_policy";
/**
 * Nights 1 and 2 leave failed invoices for `retry` (one attempt each against the chaos faults: a give-up
 * is final, which keeps the outage cool-down out of it); night 3 has no 503s.
 */
const NIGHTS = [
  { errorRate: 0.2, maxAttempts: "1" },
  { errorRate: 0.2, maxAttempts: "1" },
  { errorRate: 0, maxAttempts: "25" },
] as const;
const WAIT_MS = 120_000;
const READY = "submission worker started";

export interface ExportPhaseInput {
  readonly sim: SimulatorHandle;
  readonly redis: RedisClient;
  /** REDIS_URL, the API and tuning (LOCK_DURATION_MS: how soon a dead exporter's events are taken over). */
  readonly env: Readonly<Record<string, string>>;
  readonly prefix: string;
  readonly seed: number;
  /** The faults of the chaotic night, restored at the end. */
  readonly faults: FaultsPatch;
  /** Effects per idempotency key, counted from the simulator's attempt events. */
  readonly effects: ReadonlyMap<string, number>;
  /** All effects so far. */
  readonly effectTotal: () => number;
  readonly log: (line: string) => void;
}

export interface ExportPhaseResult {
  readonly failures: string[];
  readonly kills: number;
  readonly rows: number;
}

const pendingSummary = z.tuple([
  z.unknown(),
  z.unknown(),
  z.unknown(),
  z.array(z.tuple([z.string(), z.unknown()])).nullable(),
]);
const pendingDetail = z.array(z.tuple([z.string(), z.unknown(), z.unknown(), z.unknown()]));

/**
 * The results of record through exporter crashes: files of invoices run over three nights with
 * RESULTS_DATABASE_URL by `run` and a `worker` beside it, `retry` between the nights. Each night the
 * process whose exporter holds outbox events is killed with SIGKILL twice: once while invoices are
 * being sent, and once while a report's `rows` event is in its hands, held behind a lock on batch_rows
 * (so the rows of an older report may reach PostgreSQL after a newer one's). Then PostgreSQL must equal
 * the reports on disk row for row, and each invoice must have taken effect once.
 */
export async function exportPhase(input: ExportPhaseInput): Promise<ExportPhaseResult> {
  const failures: string[] = [];
  const random = mulberry32(input.seed ^ 0x5eed);
  const server = await PostgresServer.start();
  const pool = await openPool(server.url, { applicationName: "chaos-check" });
  const dropDir = await mkdtemp(join(tmpdir(), "invoice-relay-chaos-export-"));
  const outbox = new LedgerNames(input.prefix).outbox;
  const env = {
    ...input.env,
    QUEUE_PREFIX: input.prefix,
    RESULTS_DATABASE_URL: server.url,
    DROP_DIR: dropDir,
  };
  const fleet = new Fleet(env);
  let kills = 0;
  let rows = 0;
  try {
    await migrate(pool, { logger: silentLogger() });
    const invoices = await writeFiles(dropDir);
    fleet.startWorker();
    for (const [n, night] of NIGHTS.entries()) {
      const label = `export night ${n + 1}`;
      if (n > 0) {
        const failed = await failedRows(dropDir);
        if (failed === 0) break;
        const retry = spawnEntry("retry", "workers/cli.js", ["retry"], {
          ...env,
          MAX_ATTEMPTS: night.maxAttempts,
        });
        const exit = await retry.exited;
        if (exit.code !== 0)
          failures.push(`${label}: retry ended with ${describeExit(exit)}\n${retry.tail()}`);
      }
      input.sim.setFaults({ ...input.faults, errorRate: night.errorRate });
      const toSend = n === 0 ? invoices.length : await failedRows(dropDir);
      const startEffects = input.effectTotal();
      // Held from the start of the night: no report's rows reach PostgreSQL until the second kill.
      const locker = new pg.Client({ connectionString: server.url });
      await locker.connect();
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE batch_rows IN ACCESS EXCLUSIVE MODE");
      fleet.startRun(night.maxAttempts);
      const nightStart = Date.now();
      const killed = (what: string) => {
        kills++;
        input.log(`chaos export: ${label}: SIGKILL ${what} after ${(Date.now() - nightStart) / 1000} s`);
        return true;
      };
      const kill = (rows: boolean) => async () => {
        const what = await fleet.killHolder(input.redis, outbox, rows);
        return what !== undefined && killed(what);
      };
      try {
        // 1. while invoices are sent: whichever process holds events, once a seeded share is sent (or,
        // should fewer take effect, once the reports' rows wait on the lock)
        const share = Math.max(1, Math.floor(toSend * (0.1 + 0.4 * random())));
        const sentEnough = await within(
          async () => input.effectTotal() - startEffects >= share || (await lockWaiters(pool)) > 0,
          () => !fleet.runRunning(),
        );
        if (sentEnough) await within(kill(false), () => !fleet.runRunning());
        // 2. a report's rows in an exporter's hands, waiting on the lock
        const stalled = await within(
          async () => (await lockWaiters(pool)) > 0 && (await kill(true)()),
          () => !fleet.runRunning(),
        );
        if (!stalled) failures.push(`${label}: no exporter was seen holding a report's rows behind the lock`);
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 500)));
      } finally {
        await locker.query("ROLLBACK");
        await locker.end();
      }
      const exit = await fleet.runExit(WAIT_MS);
      input.log(
        `chaos export: ${label}: ${toSend} to send, run ${describeExit(exit)} after ${(Date.now() - nightStart) / 1000} s`,
      );
      if (!(exit.code === 0 || (exit.code === 2 && n < NIGHTS.length - 1)))
        failures.push(`${label}: run ended with ${describeExit(exit)}\n${fleet.runTail()}`);
    }
    const stopped = await fleet.stopWorker();
    if (stopped !== undefined) failures.push(stopped);
    const drained = await within(
      async () => (await outboxBacklog(input.redis, input.prefix)).entries === 0,
      () => false,
    );
    if (!drained) failures.push("the outbox was not drained after the last run");
    const compared = await compareWithReports(pool, dropDir);
    rows = compared.rows;
    failures.push(...compared.failures);
    if (rows !== invoices.length)
      failures.push(`${rows} report rows compared for ${invoices.length} invoices`);
    const wrong = invoices.filter((r) => input.effects.get(r.key) !== 1);
    if (wrong.length > 0)
      failures.push(
        `${wrong.length} invoice(s) without exactly one effect: ${wrong
          .slice(0, 5)
          .map((r) => r.externalId)
          .join(", ")}`,
      );
    if ((await failedRows(dropDir)) !== 0) failures.push("invoices still failed after the third night");
  } catch (error) {
    failures.push(`export phase: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await fleet.killAll();
    input.sim.setFaults(input.faults);
    await pool.end();
    await server.dispose();
    if (failures.length === 0) await rm(dropDir, { recursive: true, force: true });
    else input.log(`chaos export: kept the drop folder ${dropDir}`);
  }
  input.log(
    `chaos export: ${kills} exporter kills over the nights; PostgreSQL against ${rows} report rows: ` +
      (failures.length === 0 ? "equal" : "CHECKS FAILED"),
  );
  return { failures: failures.map((f) => `export phase: ${f}`), kills, rows };
}

/** `run` and a `worker`, both exporting; either can be killed and is then started again. */
class Fleet {
  private run: Spawned | undefined;
  private worker: Spawned | undefined;
  private maxAttempts = "2";

  constructor(private readonly env: Readonly<Record<string, string>>) {}

  startRun(maxAttempts: string): void {
    this.maxAttempts = maxAttempts;
    this.run = spawnEntry("run", "workers/cli.js", ["run", "--deadline", "300s"], {
      ...this.env,
      MAX_ATTEMPTS: maxAttempts,
    });
  }

  startWorker(): void {
    this.worker = spawnEntry(
      "worker",
      "workers/cli.js",
      ["worker"],
      { ...this.env, LOG_LEVEL: "info" },
      READY,
    );
  }

  runRunning(): boolean {
    return this.run?.running() ?? false;
  }

  runTail(): string {
    return this.run?.tail() ?? "";
  }

  async runExit(limitMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const run = this.run;
    if (run === undefined) return { code: null, signal: null };
    const timer = setTimeout(() => void run.stop("SIGKILL"), limitMs);
    try {
      return await run.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * SIGKILLs the process (run or worker) whose exporter holds events read and not acknowledged (with
   * `rows`: a report's rows among them), and starts it again. Says what it killed; undefined when none
   * holds any now.
   */
  async killHolder(redis: RedisClient, outbox: string, rows: boolean): Promise<string | undefined> {
    const [, , , consumers] = pendingSummary.parse(await redis.xpending(outbox, EXPORT_GROUP));
    for (const [consumer, count] of consumers ?? []) {
      if (Number(count) === 0) continue;
      const pid = Number(/-(\d+)$/.exec(consumer)?.[1]);
      const which =
        this.run?.running() && this.run.child.pid === pid
          ? "run"
          : this.worker?.running() && this.worker.child.pid === pid
            ? "worker"
            : undefined;
      if (which === undefined) continue; // a consumer killed before: its events wait to be taken over
      if (rows && !(await holdsRows(redis, outbox, consumer))) continue;
      const what = `${which} holding ${Number(count)} event(s)${rows ? " with a report's rows" : ""}`;
      if (which === "run") {
        await this.run?.stop("SIGKILL");
        this.startRun(this.maxAttempts);
      } else {
        await this.worker?.stop("SIGKILL");
        this.startWorker();
      }
      return what;
    }
    return undefined;
  }

  /** SIGTERM: the worker finishes the read in hand and exits 0; anything else is a finding. */
  async stopWorker(): Promise<string | undefined> {
    const worker = this.worker;
    if (worker === undefined) return undefined;
    // a process that has not set up its signal handlers yet dies of SIGTERM instead of stopping cleanly
    await Promise.race([worker.ready, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    const exit = await worker.stop("SIGTERM");
    return exit.code === 0 ? undefined : `the worker did not stop cleanly (${describeExit(exit)})`;
  }

  async killAll(): Promise<void> {
    await this.run?.stop("SIGKILL");
    await this.worker?.stop("SIGKILL");
  }
}

async function holdsRows(redis: RedisClient, outbox: string, consumer: string): Promise<boolean> {
  const ids = pendingDetail
    .parse(await redis.xpending(outbox, EXPORT_GROUP, "-", "+", 1000, consumer))
    .map(([id]) => id);
  for (const id of ids) {
    const [entry] = await redis.xrange(outbox, id, id);
    const read = entry === undefined ? undefined : readEntry(entry[0], entry[1]);
    if (read !== undefined && "events" in read && read.events.some((e) => e.t === "rows")) return true;
  }
  return false;
}

/** Backends of the database waiting for the lock on batch_rows. */
async function lockWaiters(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'batch_rows'::regclass",
  );
  return rows[0]?.n ?? 0;
}

/** Polls `done` every 20 ms until it holds (true), `over` says it never will, or WAIT_MS pass (false). */
async function within(done: () => Promise<boolean>, over: () => boolean): Promise<boolean> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if (await done()) return true;
    if (over()) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

async function writeFiles(dropDir: string): Promise<ExpectedRow[]> {
  const all: ExpectedRow[] = [];
  for (const [f, count] of FILES.entries()) {
    const lines: string[] = [];
    for (let i = 0; i < count; i++) {
      const fields = {
        external_id: `EXPORT-${f}-${i.toString().padStart(5, "0")}`,
        currency: "EUR",
        destination_country: "DE",
        archive_policy: "eu-10y",
      };
      all.push(expected(fields, i + 2));
      lines.push(
        [fields.external_id, fields.currency, fields.destination_country, fields.archive_policy].join(","),
      );
    }
    await writeFile(join(dropDir, `export-${f}.csv`), `${[HEADER, ...lines].join("\n")}\n`);
  }
  return all;
}

/** Rows whose status is `failed` in the reports on disk. */
async function failedRows(dropDir: string): Promise<number> {
  const reports = join(dropDir, "reports");
  let failed = 0;
  for (const name of (await readdir(reports).catch(() => [])).filter((n) => n.endsWith(".results.csv")))
    failed += parseReportCsv(await readFile(join(reports, name), "utf8")).rows.filter(
      (r) => r.status === "failed",
    ).length;
  return failed;
}
