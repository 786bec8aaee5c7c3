import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Passes } from "../../src/ledger/passes.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { statusJson } from "../cli/ops-support.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { runCli } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";
import { tempDropDir } from "../support/drop.js";
import { startGate } from "../support/gate.js";
import { servingUrl, spawnNode, until } from "../support/processes.js";
import { parseMetrics, sampleValue } from "../support/prometheus-text.js";
import { testRedisUrl } from "../support/redis.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const DAY = 86_400_000;
const cleanups = cleanupsAfterEach();
let sim: SimulatorHandle;
const redis = new Redis(testRedisUrl());

beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
});
afterAll(async () => {
  await sim.close();
  redis.disconnect();
});

describe("a run killed mid-night", () => {
  it("when run is killed with SIGKILL after a clean night, then status and /metrics show its pass ended without a word, exit 1", async () => {
    const drop = await tempDropDir();
    // Every request is held: the run is mid-night for as long as the test wants.
    const gate = await startGate(sim.url);
    cleanups.push(drop.cleanup, () => gate.close());
    await writeFile(
      join(drop.dir, "night.csv"),
      "external_id,currency,destination_country,archive_policy\nK-1,EUR,DE,eu-10y\n",
    );
    const env = cliEnv({ apiUrl: gate.url, apiKey: API_KEY, name: "killed", dropDir: drop.dir });
    const passes = new Passes(redis, env["QUEUE_PREFIX"] ?? "");
    // The night before ended well: the last-pass gauges said 0.
    const before = Date.now() - DAY;
    const clean = { id: "20261120T020000Z-0a0b0c", kind: "run" as const, batches: [], invoices: {} };
    await passes.write({ ...clean, startedAt: before, endedAt: before + 1000, exitCode: 0 }, 2 * DAY);

    const run = spawnNode("workers/cli.js", ["run"], env);
    cleanups.push(async () => {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
      await run.exited;
    });
    await gate.firstRequest;
    // Its record names its file by the next renewal of its lease.
    await until(
      async () => (await passes.open()).some((p) => p.kind === "run" && p.batches.length === 1),
      15_000,
      "the run's file in its record",
    );
    // While it runs, its lease holds: it reads as running.
    const running = (await statusJson(env)).passes[0];
    expect(running).toMatchObject({
      kind: "run",
      ended_at: null,
      exit_code: null,
      ended_without_word: false,
    });
    run.child.kill("SIGKILL");
    await run.exited;

    const status = await statusJson(env);
    const killed = status.passes[0];
    expect(killed).toMatchObject({
      id: running?.id,
      kind: "run",
      files: 1,
      exit_code: 1,
      ended_without_word: true,
      // Its figures, read from what Redis recorded during it, as its own end would have: its one
      // invoice not answered yet, nothing refused, no answer in any second.
      invoices: { pending: 1 },
      refused: 0,
      busiest_second: 0,
    });
    expect(Date.parse(killed?.ended_at ?? "")).toBeGreaterThanOrEqual(Date.parse(killed?.started_at ?? ""));
    const text = await runCli(["status"], env);
    const heard = killed?.ended_at?.slice(11, 19) ?? "";
    expect(text.output).toContain(` 1 (ended without a word, last heard at ${heard} UTC) `);

    const consoleProc = spawnNode("workers/cli.js", ["console"], { ...env, HTTP_ADDR: "127.0.0.1:0" });
    cleanups.push(async () => {
      consoleProc.child.kill("SIGTERM");
      await consoleProc.exited;
    });
    const url = await servingUrl(consoleProc);
    const metrics = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    expect(sampleValue(metrics, "invoice_relay_last_pass_exit_code")).toBe(1);
    const page = await (await fetch(`${url}/passes`)).text();
    expect(page).toContain("1 could not finish: ended without a word (killed)");
    const its = await (await fetch(`${url}/passes/${encodeURIComponent(killed?.id ?? "")}`)).text();
    expect(its).toMatch(/last heard at/);
  });
});
