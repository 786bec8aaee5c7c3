import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { silentLogger } from "../../src/log/logger.js";
import { migrate } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { runCli } from "../support/cli-run.js";
import { freshDatabase } from "../support/postgres.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
});
afterAll(async () => {
  await sim.close();
});

const cleanups = cleanupsAfterEach();

function env(httpAddr: string): Record<string, string> {
  return cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name: "probes" },
    { LOG_LEVEL: "info", HTTP_ADDR: httpAddr },
  );
}

function spawnCli(args: string[], environment: Record<string, string>): Spawned {
  const proc = spawnNode("workers/cli.js", args, environment);
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

/** A migrated database of the test's own: its URL. */
async function migratedDatabase(): Promise<string> {
  const db = await freshDatabase();
  const pool = await openPool(db.url);
  try {
    await migrate(pool, { logger: silentLogger() });
  } finally {
    await pool.end();
  }
  cleanups.push(() => db.drop());
  return db.url;
}

/** The status of GET url, or undefined while nothing answers there. */
async function statusOf(url: string): Promise<number | undefined> {
  return fetch(url).then(
    (response) => response.status,
    () => undefined,
  );
}

describe("health probes of the long-running commands", () => {
  it("when worker runs with HTTP_ADDR on a free port, then /healthz and /readyz answer 200 and it logs the address; SIGTERM ends it with 0", async () => {
    const port = await freePort();
    const proc = spawnCli(["worker"], env(`127.0.0.1:${port}`));
    const base = `http://127.0.0.1:${port}`;
    await until(async () => (await statusOf(`${base}/readyz`)) === 200, 20_000, "/readyz to answer 200");
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("ok");
    const ready = await fetch(`${base}/readyz`);
    expect(await ready.json()).toEqual({
      status: "ready",
      failed: [],
      checks: { redis: "ok", apiKey: "ok", shutdown: "ok" },
    });
    expect(proc.output()).toContain(`HTTP server listening on ${base}`);

    proc.child.kill("SIGTERM");
    expect((await proc.exited).code, proc.output()).toBe(0);
    expect(await statusOf(`${base}/healthz`)).toBeUndefined();
  });

  it.each([["run"], ["start"], ["worker"]])(
    "when HTTP_ADDR's port is taken, then %s exits 1 naming HTTP_ADDR and what to do, and ends by itself with its exporter closed",
    async (command) => {
      const taken: Server = createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      cleanups.push(
        () =>
          new Promise((resolve) => {
            taken.close(() => {
              resolve();
            });
          }),
      );
      const address = taken.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const drop = await tempDropDir();
      cleanups.push(drop.cleanup);
      // With the export on, the exporter thread is running when the port is found taken: it must be closed.
      const db = await migratedDatabase();

      // No forced exit: a handle left open keeps the process alive until runCli's limit kills it.
      const result = await runCli(
        [command],
        { ...env(`127.0.0.1:${port}`), DROP_DIR: drop.dir, RESULTS_DATABASE_URL: db },
        30_000,
      );

      expect(result.signal, result.output).toBeNull();
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain(
        `invoice-relay: HTTP_ADDR=127.0.0.1:${port}: the port is already in use`,
      );
      expect(result.output).toContain("HTTP_ADDR=off");
      expect(result.output).not.toContain("submission worker started");
      expect(result.output).not.toContain("invoice-relay started");
    },
  );

  it("when start runs with HTTP_ADDR set, then its /readyz answers 200", async () => {
    const port = await freePort();
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    spawnCli(["start", "--schedule", "0 2 * * *"], { ...env(`127.0.0.1:${port}`), DROP_DIR: drop.dir });
    await until(
      async () => (await statusOf(`http://127.0.0.1:${port}/readyz`)) === 200,
      20_000,
      "start's /readyz to answer 200",
    );
    expect(await statusOf(`http://127.0.0.1:${port}/healthz`)).toBe(200);
  });

  it("when worker runs without HTTP_ADDR, then it serves no probes and logs no address", async () => {
    const environment = env("off");
    delete environment["HTTP_ADDR"];
    const proc = spawnCli(["worker"], environment);
    await until(
      () => Promise.resolve(proc.output().includes("submission worker started")),
      20_000,
      "the worker to start",
    );
    expect(proc.output()).not.toContain("HTTP server listening");
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code).toBe(0);
  });
});
