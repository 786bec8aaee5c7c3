import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { INVOICE_QUEUE, unfinishedJobs } from "../../src/queue/invoice-queue.js";
import type { InvoiceJobData } from "../../src/queue/job-data.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { spawnNode, START_UP_MS, until, type Spawned } from "../support/processes.js";
import { testRedis } from "../support/redis.js";

// A file six times the window, through the CLI as an operator runs it, with the queue counted all along.

const API_KEY = "irs_live_e2e_key_0123456789";
const WINDOW = 1000;
const ROWS = 6000;
const cleanups = cleanupsAfterEach();

interface Setup {
  readonly sim: SimulatorHandle;
  readonly dir: string;
  readonly env: Record<string, string>;
  /** The most jobs not yet final the queue held while the test watched. */
  readonly most: () => number;
  readonly registered: () => Promise<number>;
  readonly state: () => Promise<string | undefined>;
}

async function setUp(name: string, more: Record<string, string> = {}): Promise<Setup> {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 41, latencyMs: { min: 2, max: 10 } });
  const drop = await tempDropDir();
  const redis = testRedis();
  cleanups.push(
    () => sim.close(),
    drop.cleanup,
    async () => {
      await redis.quit();
    },
  );
  const rows = Array.from({ length: ROWS }, (_, i) => `${name}-${i},EUR,DE,eu-10y`);
  await writeFile(
    join(drop.dir, `${name}.csv`),
    ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
  );
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name, dropDir: drop.dir },
    { INGEST_WINDOW: String(WINDOW), ...more },
  );
  const prefix = env["QUEUE_PREFIX"] ?? "";
  const connection = redis.duplicate();
  const queue = new Queue<InvoiceJobData>(INVOICE_QUEUE, { connection, prefix });
  let most = 0;
  let watching = true;
  const watched = (async () => {
    while (watching) {
      most = Math.max(most, await unfinishedJobs(queue));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  cleanups.push(async () => {
    watching = false;
    await watched;
    await queue.close();
    connection.disconnect();
  });
  const batches = new BatchStore(redis, prefix);
  const batch = async () => (await batches.list())[0];
  return {
    sim,
    dir: drop.dir,
    env,
    most: () => most,
    registered: async () => {
      const id = await batch();
      if (id === undefined) return 0;
      return Number((await redis.hget(batches.names.batch(id), "registered_line")) ?? 0);
    },
    state: async () => {
      const id = await batch();
      return id === undefined ? undefined : (await batches.get(id))?.state;
    },
  };
}

const said = (proc: Spawned, text: string) => Promise.resolve(proc.output().includes(text));

describe("ingest keeps to INGEST_WINDOW", () => {
  it("when a file six times the window is ingested with no worker running, then the queue holds at most the window and ingest says it waits; once a worker runs, every row is sent once", async () => {
    const s = await setUp("nowork");
    const ingest = spawnNode("workers/cli.js", ["ingest"], s.env);
    await until(() => said(ingest, "as many as INGEST_WINDOW=1000 allows"), 30_000, "ingest to say it waits");
    // Waiting, not done: the rest of the file is neither registered nor enqueued.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ingest.child.exitCode).toBeNull();
    expect(await s.registered()).toBeLessThan(ROWS / 2);
    expect(s.sim.stats().effects.total).toBe(0);

    const worker = spawnNode("workers/cli.js", ["worker"], s.env);
    cleanups.push(async () => {
      worker.child.kill("SIGTERM");
      await worker.exited;
    });
    const { code } = await ingest.exited;
    expect(code, ingest.output()).toBe(0);
    expect(ingest.output()).toContain(`${ROWS} rows, ${ROWS} valid, ${ROWS} enqueued`);
    await until(() => Promise.resolve(s.sim.stats().effects.total >= ROWS), 60_000, "every invoice sent");
    expect(s.sim.stats().effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
    expect(s.most()).toBeGreaterThan(0);
    expect(s.most()).toBeLessThanOrEqual(WINDOW);
  });

  it("when ingest is stopped with SIGTERM while it waits for room, then it exits 1 leaving the file claimed, and the next run resumes it: every row sent once", async () => {
    const s = await setUp("stopped");
    const ingest = spawnNode("workers/cli.js", ["ingest"], s.env);
    await until(() => said(ingest, "as many as INGEST_WINDOW=1000 allows"), 30_000, "ingest to say it waits");
    ingest.child.kill("SIGTERM");
    const stopped = await ingest.exited;
    expect(stopped.code, ingest.output()).toBe(1);
    expect(ingest.output()).toMatch(/interrupted while ingesting stopped\.csv: it stays in processing\//);
    expect(await s.state()).toBe("ingesting");
    expect(await readdir(join(s.dir, "processing"))).toHaveLength(1);

    const run = spawnNode("workers/cli.js", ["run"], s.env);
    const { code } = await run.exited;
    expect(code, run.output()).toBe(0);
    const report = [...(await readReports(s.dir)).values()][0];
    expect(report?.rows).toHaveLength(ROWS);
    expect(report?.rows.filter((r) => r.status !== "succeeded")).toEqual([]);
    expect(s.sim.stats().effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
    expect(s.most()).toBeLessThanOrEqual(WINDOW);
  });

  it("when run is killed with SIGKILL mid-file, then the next run resumes where the window was: every row sent once, the queue never past the window", async () => {
    const s = await setUp("killed", { LOCK_DURATION_MS: "2000" });
    const first = spawnNode("workers/cli.js", ["run"], s.env);
    await until(() => Promise.resolve(s.sim.stats().effects.total >= 1500), 60_000, "1500 effects");
    first.child.kill("SIGKILL");
    await first.exited;
    // mid-file: the window held the rest of it back
    expect(await s.registered()).toBeLessThan(ROWS);
    expect(await s.state()).toBe("ingesting");

    const second = spawnNode("workers/cli.js", ["run"], s.env);
    const { code } = await second.exited;
    expect(code, second.output()).toBe(0);
    const report = [...(await readReports(s.dir)).values()][0];
    expect(report?.rows).toHaveLength(ROWS);
    expect(report?.rows.filter((r) => r.status !== "succeeded")).toEqual([]);
    expect(s.sim.stats().effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
    expect(await readdir(join(s.dir, "processing"))).toEqual([]);
    expect(s.most()).toBeLessThanOrEqual(WINDOW);
  });

  it("when start is stopped with SIGTERM while its scan waits for room, then it exits 0 within its grace and leaves the file claimed", async () => {
    const s = await setUp("start", {
      SUBMIT_CONCURRENCY: "1",
      SUBMIT_RATE_PER_SEC: "20",
      SHUTDOWN_GRACE_MS: "2000",
      HTTP_ADDR: "127.0.0.1:0",
    });
    const start = spawnNode("workers/cli.js", ["start", "--schedule", "0 2 * * *"], s.env);
    cleanups.push(async () => {
      if (start.child.exitCode === null && start.child.signalCode === null) start.child.kill("SIGKILL");
      await start.exited;
    });
    await until(async () => (await s.registered()) >= WINDOW / 2, 30_000, "the first chunks registered");
    await until(() => Promise.resolve(s.most() >= WINDOW - 250), 30_000, "the window full");
    start.child.kill("SIGTERM");
    const { code } = await start.exited;
    expect(code, start.output()).toBe(0);
    expect(start.output()).not.toContain("scan failed");
    expect(await s.state()).toBe("ingesting");
    expect(await s.registered()).toBeLessThan(ROWS);
    expect(await readdir(join(s.dir, "processing"))).toHaveLength(1);
    expect(s.most()).toBeLessThanOrEqual(WINDOW);
  });

  it("when the service refuses the API key while ingest waits for room, then run exits 1 saying so, and the next run with the right key sends every row once", async () => {
    const s = await setUp("refused");
    const refused = spawnNode("workers/cli.js", ["run"], {
      ...s.env,
      INVOICE_API_KEY: "irs_live_not_the_right_key_99",
    });
    const stopped = await refused.exited;
    expect(stopped.code, refused.output()).toBe(1);
    expect(refused.output()).toMatch(/refused the API key/);
    expect(await s.registered()).toBeLessThan(ROWS);

    const fixed = spawnNode("workers/cli.js", ["run"], s.env);
    const { code } = await fixed.exited;
    expect(code, fixed.output()).toBe(0);
    expect(s.sim.stats().effects).toMatchObject({ total: ROWS, keysWithMultipleEffects: 0 });
    expect(s.most()).toBeLessThanOrEqual(WINDOW);
  });

  it("when run's deadline passes while ingest waits for room, then run stops at once, exits 1 and leaves the file claimed", async () => {
    // twenty requests a second at most: the window stays full far past the deadline
    const s = await setUp("deadline", { SUBMIT_CONCURRENCY: "1", SUBMIT_RATE_PER_SEC: "20" });
    const run = spawnNode("workers/cli.js", ["run", "--deadline", `${START_UP_MS + 2000}ms`], s.env);
    const { code } = await run.exited;
    expect(code, run.output()).toBe(1);
    expect(run.output()).toMatch(/deadline passed with \d+ invoice\(s\) not final yet/);
    expect(await s.state()).toBe("ingesting");
    expect(await s.registered()).toBeLessThan(ROWS);
    expect(await readdir(join(s.dir, "processing"))).toHaveLength(1);
    expect(s.most()).toBeLessThanOrEqual(WINDOW);
  });
});
