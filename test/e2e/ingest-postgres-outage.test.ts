import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readInvoiceFileBatches } from "../../src/ingest/read-invoice-file.js";
import { resolveNamespace } from "../../src/invoice/key.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { startSimulator, type Attempt } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { PostgresServer } from "../support/postgres-server.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// PostgreSQL down while a new file arrives (docs/reliability.md, "PostgreSQL down during ingest"): the
// invoices already queued are sent, the new file waits for its look-up, and once PostgreSQL is back each
// of its rows is decided against the results of record and routed once.
const API_KEY = "irs_live_pg_outage_ingest_0123456789";
const PASSWORD = "pg-outage-Secret-7f3a";
const HEADER = "external_id,currency,destination_country,archive_policy";
const QUEUED = 200;
const NEW = 200;
const cleanups = cleanupsAfterEach();

/** Each line's idempotency key, as ingest derives it. */
async function keysOf(path: string): Promise<Map<number, string>> {
  const keys = new Map<number, string>();
  for await (const batch of readInvoiceFileBatches(path, { namespace: resolveNamespace() }))
    for (const item of batch) if (item.kind === "valid") keys.set(item.line, item.key);
  return keys;
}

describe("a new file while PostgreSQL is down", () => {
  it("when run starts with PostgreSQL stopped, then queued invoices are sent, the new file waits naming the database's host, and after PostgreSQL returns every row of it is decided against the results of record and routed once", async () => {
    const server = await PostgresServer.start();
    cleanups.push(() => server.dispose());
    const pool = await openPool(server.url);
    cleanups.push(() => pool.end());
    await migrate(pool, { logger: silentLogger() });
    const sim = await startSimulator({ apiKey: API_KEY, seed: 29, latencyMs: { min: 5, max: 15 } });
    cleanups.push(() => sim.close());
    const seen: Attempt[] = [];
    sim.events.on("attempt", (attempt) => seen.push(attempt));
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const tag = randomUUID().slice(0, 8);
    const withPassword = new URL(server.url);
    withPassword.password = PASSWORD;
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "pg-outage-ingest", dropDir: drop.dir },
      {
        RESULTS_DATABASE_URL: withPassword.toString(),
      },
    );

    // invoices queued while PostgreSQL is up (ingest only: nothing sent yet)
    const queuedRows = Array.from({ length: QUEUED }, (_, i) => `Q-${tag}-${i},EUR,DE,eu-10y`);
    await writeFile(join(drop.dir, "queued.csv"), [HEADER, ...queuedRows].join("\n"));
    const ingested = await runCli(["ingest"], env, 60_000);
    expect(ingested.code, ingested.output).toBe(0);
    expect(sim.stats().requests.total).toBe(0);

    // the results of record know two of the new file's invoices from long ago: line 2 succeeded, and
    // line 3's external_id succeeded under another key (its content changed since)
    const newRows = Array.from({ length: NEW }, (_, i) => `N-${tag}-${i},EUR,DE,eu-10y`);
    const newPath = join(drop.dir, "new.csv");
    const newText = [HEADER, ...newRows].join("\n");
    await writeFile(join(drop.dir, "..", `new-${tag}.csv`), newText);
    const keys = await keysOf(join(drop.dir, "..", `new-${tag}.csv`));
    const earlierKey = randomUUID();
    await pool.query(
      `INSERT INTO results (idempotency_key, external_id, status, http_status, correlation_id, attempts)
       VALUES ($1, $2, 'succeeded', 201, 'cid-long-ago', 1), ($3, $4, 'succeeded', 201, 'cid-other', 1)`,
      [keys.get(2), `N-${tag}-0`, earlierKey, `N-${tag}-1`],
    );

    await server.pause();
    await writeFile(newPath, newText);
    const run = spawnNode("workers/cli.js", ["run", "--deadline", "3m"], env);
    await until(
      () =>
        Promise.resolve(
          sim.stats().effects.total >= QUEUED &&
            run
              .output()
              .includes(`waiting for PostgreSQL at 127.0.0.1:${server.port} (RESULTS_DATABASE_URL)`),
        ),
      60_000,
      "the queued invoices sent and the new file waiting for PostgreSQL",
    );
    // while it waits: the queued invoices went out, none of the new file's
    const newKeys = new Set(keys.values());
    expect(seen.filter((a) => newKeys.has(a.idempotencyKey ?? ""))).toEqual([]);
    expect(run.output()).toContain("new.csv");
    await server.resume();

    const { code } = await finish(run, 180_000);
    expect(code, run.output()).toBe(2); // one conflict
    expect(run.output()).not.toContain(PASSWORD);
    const report = (await readReports(drop.dir)).get("new.csv");
    expect(report?.rows).toHaveLength(NEW);
    const byLine = new Map(report?.rows.map((r) => [r.line, r]));
    expect(byLine.get(2)).toMatchObject({ status: "duplicate", correlation_id: "cid-long-ago" });
    expect(byLine.get(3)?.status).toBe("conflict");
    expect(byLine.get(3)?.error).toContain(earlierKey);
    expect(report?.rows.filter((r) => r.status === "succeeded")).toHaveLength(NEW - 2);
    expect((await readReports(drop.dir)).get("queued.csv")?.rows.every((r) => r.status === "succeeded")).toBe(
      true,
    );
    expect(sim.stats().effects).toMatchObject({ total: QUEUED + NEW - 2, keysWithMultipleEffects: 0 });
    const caught = [keys.get(2), keys.get(3)];
    expect(seen.filter((a) => caught.includes(a.idempotencyKey))).toEqual([]);
  }, 300_000);
  it("when start --watch starts with PostgreSQL stopped, then a file dropped meanwhile waits naming the host, is sent once PostgreSQL returns, and SIGTERM still ends the service", async () => {
    const server = await PostgresServer.start();
    cleanups.push(() => server.dispose());
    const pool = await openPool(server.url);
    cleanups.push(() => pool.end());
    await migrate(pool, { logger: silentLogger() });
    const sim = await startSimulator({ apiKey: API_KEY, seed: 31 });
    cleanups.push(() => sim.close());
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const tag = randomUUID().slice(0, 8);
    await server.pause();
    const start = spawnNode(
      "workers/cli.js",
      ["start", "--watch"],
      cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, name: "pg-outage-start", dropDir: drop.dir },
        {
          RESULTS_DATABASE_URL: server.url,
        },
      ),
    );
    cleanups.push(async () => {
      start.child.kill("SIGKILL");
      await start.exited;
    });
    const rows = Array.from({ length: NEW }, (_, i) => `W-${tag}-${i},EUR,DE,eu-10y`);
    await writeFile(join(drop.dir, "watched.csv"), [HEADER, ...rows].join("\n"));
    await until(
      () => Promise.resolve(start.output().includes(`waiting for PostgreSQL at 127.0.0.1:${server.port}`)),
      60_000,
      "the watched file waiting for PostgreSQL",
    );
    expect(sim.stats().requests.total).toBe(0);
    await server.resume();

    await until(
      async () => (await readReports(drop.dir)).get("watched.csv") !== undefined,
      120_000,
      "the watched file's report",
    );
    const report = (await readReports(drop.dir)).get("watched.csv");
    expect(report?.rows.every((r) => r.status === "succeeded")).toBe(true);
    expect(report?.rows).toHaveLength(NEW);
    expect(sim.stats().effects).toMatchObject({ total: NEW, keysWithMultipleEffects: 0 });
    start.child.kill("SIGTERM");
    expect((await finish(start, 60_000)).code, start.output()).toBe(0);
  }, 300_000);
});
