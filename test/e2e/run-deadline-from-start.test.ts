import { execFileSync } from "node:child_process";
import { open, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { finish, runCli } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { startGate } from "../support/gate.js";
import { releasePipe } from "../support/named-pipe.js";
import { spawnNode } from "../support/processes.js";

const API_KEY = "irs_live_e2e_key_0123456789";
/** How long the run's start-up waits for its profiles file: most of the deadline. */
const STALL_MS = 12_000;
const DEADLINE_MS = 14_000;
const GRACE_MS = 500;
/**
 * Room for the process to load and to close on a busy machine: generous, and still less than the
 * stall, which a deadline counted from after start-up would add.
 */
const MARGIN_MS = 10_000;
const CSV = "external_id,currency,destination_country,archive_policy\nSTART-1,EUR,DE,eu-10y\n";
const PROFILES = "profiles: []\n";
const LIMIT_MS = STALL_MS + DEADLINE_MS + GRACE_MS + CLOSING_BOUND_MS + 15_000;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

describe("run's deadline and its start-up", () => {
  it(
    "when the run's start-up is slow (its profiles file on a share that answers late) and the service holds every request, then run ends by its deadline and grace counted from when it was started, exit 1",
    async () => {
      const drop = await tempDropDir();
      const elsewhere = await tempDropDir();
      const gate = await startGate(sim.url); // never opened: the invoice stays in flight
      cleanups.push(drop.cleanup, elsewhere.cleanup, () => gate.close());
      await writeFile(join(drop.dir, "night.csv"), CSV);
      const sources = join(elsewhere.dir, "sources.yaml");
      execFileSync("mkfifo", [sources]);
      const env = cliEnv(
        { apiUrl: gate.url, apiKey: API_KEY, name: "deadline-from-start", dropDir: drop.dir },
        { SHUTDOWN_GRACE_MS: String(GRACE_MS), SOURCES_FILE: sources },
      );
      const run = spawnNode("workers/cli.js", ["run", "--deadline", `${DEADLINE_MS / 1000}s`], env);
      // The share answers: the pipe's reader gets the profiles, and later reads (the SFTP sources are
      // in the same file) find them in a file put in the pipe's place.
      const answer = setTimeout(() => {
        void (async () => {
          const pipe = await open(sources, "w");
          await writeFile(`${sources}.new`, PROFILES);
          await rename(`${sources}.new`, sources);
          await pipe.writeFile(PROFILES);
          await pipe.close();
        })();
      }, STALL_MS);
      cleanups.push(() => {
        clearTimeout(answer);
        releasePipe(sources);
        return Promise.resolve();
      });
      const result = await finish(run, LIMIT_MS);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toMatch(/deadline passed with \d+ invoice\(s\) not final yet/);
      expect(result.ms, result.output).toBeLessThan(DEADLINE_MS + GRACE_MS + MARGIN_MS);
    },
    LIMIT_MS + 10_000,
  );

  it("when the deadline has passed by the time the pass begins, then run exits 1 saying so, never 'nothing to do', and the file waits for the next run", async () => {
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    await writeFile(join(drop.dir, "night.csv"), CSV);
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "deadline-at-start", dropDir: drop.dir });
    const late = await runCli(["run", "--deadline", "1ms"], env, LIMIT_MS);
    expect(late.code, late.output).toBe(1);
    expect(late.output).toMatch(/deadline passed/);
    expect(late.output).not.toMatch(/nothing to do/);
    const next = await runCli(["run"], env, LIMIT_MS);
    expect(next.code, next.output).toBe(0);
    expect((await readReports(drop.dir)).get("night.csv")?.rows.map((r) => r.status)).toEqual(["succeeded"]);
  });
});
