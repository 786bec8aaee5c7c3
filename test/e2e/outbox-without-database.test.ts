import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { LedgerNames } from "../../src/ledger/names.js";
import { Outbox } from "../../src/ledger/outbox.js";
import { outboxBacklog, redisTimeMs } from "../../src/ledger/outbox-backlog.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { startSimulator } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { servingUrl, spawnNode } from "../support/processes.js";
import { tempDropDir } from "../support/drop.js";
import { freshDatabase } from "../support/postgres.js";
import { testRedisUrl } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// A deployment that ran with RESULTS_DATABASE_URL and is then started without it: the outbox stays on,
// so every writing command refuses until `db detach` turns it off, and retention then sweeps again.
const API_KEY = "irs_live_detach_key_0123456789";
const RETENTION_MS = 2000;
const CONSOLE_TOKEN = "console-token-for-the-detach-test";
const cleanups = cleanupsAfterEach();

const fileText = (tag: string) =>
  [
    "external_id,currency,destination_country,archive_policy",
    ...Array.from({ length: 20 }, (_, i) => `DT-${tag}-${i},EUR,DE,eu-10y`),
  ].join("\n") + "\n";

function adminRedis(): Redis {
  const redis = new Redis(testRedisUrl());
  cleanups.push(() => {
    redis.disconnect();
    return Promise.resolve();
  });
  return redis;
}

describe("the outbox left on by a deployment that no longer has RESULTS_DATABASE_URL", () => {
  it("when a night ran with the database and commands start without it, then every writing command is refused with exit 1 naming RESULTS_DATABASE_URL and `db detach`, `db detach --yes` drops the backlog and turns the outbox off, and the next nights sweep by retention", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
    const drop = await tempDropDir();
    const redis = adminRedis();
    const db = await freshDatabase();
    const pool = await openPool(db.url);
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => db.drop(),
      () => pool.end(),
    );
    await migrate(pool, { logger: silentLogger() });
    const prefix = `detach-${randomUUID()}`;
    const names = new LedgerNames(prefix);
    const withoutDb = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
      {
        RESULTS_RETENTION: `${RETENTION_MS / 1000}s`,
      },
    );
    const withDb = { ...withoutDb, RESULTS_DATABASE_URL: db.url };

    // Night 1, with the database: the outbox is on and drained.
    await writeFile(join(drop.dir, "night-1.csv"), fileText(`1-${randomUUID().slice(0, 8)}`));
    const night1 = await runCli(["run"], withDb, 60_000);
    expect([night1.code, night1.output]).toEqual([0, expect.any(String)]);
    expect(await redis.exists(names.outboxOn)).toBe(1);
    expect((await outboxBacklog(redis, prefix)).entries).toBe(0);
    const [night1Batch] = await new BatchStore(redis, prefix).list();

    // Without it: each writing command is refused before it claims or writes anything.
    await writeFile(join(drop.dir, "night-2.csv"), fileText(`2-${randomUUID().slice(0, 8)}`));
    const refusals = [["run"], ["start"], ["worker"], ["ingest"], ["retry"]];
    for (const args of refusals) {
      const refused = await runCli(args, { ...withoutDb, CONSOLE_TOKEN }, 30_000);
      expect([args[0], refused.code]).toEqual([args[0], 1]);
      expect(refused.output).toContain("RESULTS_DATABASE_URL is not set");
      expect(refused.output).toContain("invoice-relay db detach");
    }
    expect(await readdir(drop.dir)).toContain("night-2.csv");
    expect(await new BatchStore(redis, prefix).count()).toBe(1);
    expect((await outboxBacklog(redis, prefix)).entries).toBe(0);

    // Reading still works, and says what to do.
    const status = await runCli(["status"], withoutDb);
    expect([status.code, status.output]).toEqual([0, expect.stringContaining("invoice-relay db detach")]);

    // Events written meanwhile by a process that had the database (an ingest: nothing exports them).
    const ingest = await runCli(["ingest"], withDb);
    expect([ingest.code, ingest.output]).toEqual([0, expect.any(String)]);
    const backlog = (await outboxBacklog(redis, prefix)).entries;
    expect(backlog).toBeGreaterThan(0);

    // No terminal and no --yes: nothing dropped.
    const unconfirmed = await runCli(["db", "detach"], withoutDb);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.output).toContain(`${backlog} event(s)`);
    expect(unconfirmed.output).toContain("--yes");
    expect(await redis.exists(names.outboxOn)).toBe(1);
    expect((await outboxBacklog(redis, prefix)).entries).toBe(backlog);

    const detached = await runCli(["db", "detach", "--yes"], withoutDb);
    expect([detached.code, detached.output]).toEqual([
      0,
      expect.stringContaining(`dropped ${backlog} event(s)`),
    ]);
    expect(await redis.exists(names.outboxOn, names.outbox)).toBe(0);

    // Night 2 without the database, after night 1's retention: night 2's file is submitted with nothing
    // written to an outbox, and night 1's batch is swept.
    await sleep(RETENTION_MS + 500);
    const night2 = await runCli(["run"], withoutDb, 60_000);
    expect([night2.code, night2.output]).toEqual([0, expect.any(String)]);
    expect(await redis.exists(names.outboxOn, names.outbox)).toBe(0);
    const kept = await new BatchStore(redis, prefix).list();
    expect(kept).toHaveLength(1);
    expect(kept).not.toContain(night1Batch);

    // Night 3, after night 2's retention: its batch is swept too.
    await sleep(RETENTION_MS + 500);
    const night3 = await runCli(["run"], withoutDb, 60_000);
    expect([night3.code, night3.output]).toEqual([0, expect.stringContaining("nothing to do")]);
    expect(await new BatchStore(redis, prefix).list()).toEqual([]);
    const after = await runCli(["status"], withoutDb);
    expect([after.code, after.output]).toEqual([0, expect.stringContaining("nothing kept")]);
    expect(after.output).not.toContain("db detach");
  }, 240_000);
});

describe("the console while the deployment refuses writing", () => {
  it("when the outbox is on and RESULTS_DATABASE_URL is not set, then console comes up even with CONSOLE_TOKEN, its pages say why writing commands refuse, and its retry is refused", async () => {
    const env = cliEnv({ name: "console-refusal" }, { HTTP_ADDR: "127.0.0.1:0", CONSOLE_TOKEN });
    const prefix = env["QUEUE_PREFIX"] ?? "";
    const redis = adminRedis();
    await new Outbox(redis, prefix).enable();
    const batches = new BatchStore(redis, prefix);
    const id = "20261120T010000Z-abc123";
    await batches.open({ id, file: "a.csv", format: "csv", path: "/nowhere/a.csv", host: "h" });
    await batches.update(id, { state: "reported", rows: 1, counts: '{"failed":1}' });
    const console = spawnNode("workers/cli.js", ["console"], env);
    cleanups.push(async () => {
      if (console.child.exitCode === null && console.child.signalCode === null) console.child.kill("SIGTERM");
      await console.exited;
    });
    const url = await servingUrl(console);
    const bearer = { authorization: `Bearer ${CONSOLE_TOKEN}` };
    const page = await (await fetch(`${url}/batches/${id}`, { headers: bearer })).text();
    expect(page).toContain("RESULTS_DATABASE_URL is not set: commands that write refuse to start");
    expect(page).toContain("invoice-relay db detach");
    const retry = await fetch(`${url}/batches/${id}/retry`, { method: "POST", headers: bearer });
    expect(retry.status).toBe(503);
    expect(await retry.text()).toContain("RESULTS_DATABASE_URL is not set");
  }, 60_000);
});

describe("status of a batch whose retention has passed while its events wait in the outbox", () => {
  it("when the outbox holds events older than the batch's report, then status says it is kept waiting for export, with the backlog, instead of a time already past", async () => {
    const redis = adminRedis();
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const prefix = `waiting-${randomUUID()}`;
    const names = new LedgerNames(prefix);
    const now = await redisTimeMs(redis);
    const HOUR = 3_600_000;
    await new Outbox(redis, prefix).enable();
    // An event from ten hours ago that PostgreSQL has not taken yet, then a batch reported five hours ago.
    await redis.xadd(names.outbox, `${now - 10 * HOUR}-0`, "e", '{"t":"attempt"}');
    const batches = new BatchStore(redis, prefix, () => now - 5 * HOUR);
    await batches.open({ id: "b-waiting", file: "w.csv", format: "csv", path: "/w.csv", host: "h" });
    await batches.markReported("b-waiting", {
      report_csv: "w.results.csv",
      summary_json: "w.summary.json",
      counts: '{"succeeded":1}',
      path: "/archive/w.csv",
    });
    const backlog = (await outboxBacklog(redis, prefix)).entries;
    const env = {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      RESULTS_RETENTION: "1h",
      RESULTS_DATABASE_URL: db.url,
    };

    const text = await runCli(["status"], env);
    expect(text.code).toBe(0);
    expect(text.output).toContain(
      `oldest batch b-waiting is kept: waiting for export (${backlog} event(s) in the outbox, the oldest from ${new Date(now - 10 * HOUR).toISOString()})`,
    );
    expect(text.output).not.toContain("goes at");

    const json = await runCli(["status", "--json"], env);
    const report = JSON.parse(json.output) as { ledger: { oldest_batch: unknown } };
    expect(report.ledger.oldest_batch).toEqual({
      id: "b-waiting",
      created_at: new Date(now - 5 * HOUR).toISOString(),
      expires_at: null,
      kept_because: "waiting for export",
    });
  }, 60_000);
});
