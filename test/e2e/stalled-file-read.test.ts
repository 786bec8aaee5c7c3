import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { ensureDropFolder, dropFolder } from "../../src/ingest/drop-folder.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";

// A read of the drop folder that never returns: a named pipe no one writes to, in processing/ under a
// claimed file's name. Opening it waits for ever, as a read of a hung network share does.

const API_KEY = "irs_live_e2e_key_0123456789";
const DEADLINE_MS = 2_000;
const GRACE_MS = 500;
/** Generous: the hard stop comes at the deadline, the grace and the closing bound; a margin on top. */
const LIMIT_MS = DEADLINE_MS + GRACE_MS + CLOSING_BOUND_MS + 15_000;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

describe("a drop folder read that never returns", () => {
  it(
    "when a claimed file's read never returns, then run's hard stop by its deadline names that file, not a guess",
    async () => {
      const drop = await tempDropDir();
      cleanups.push(drop.cleanup);
      await ensureDropFolder(dropFolder(drop.dir));
      const stalled = join(drop.dir, "processing", "20261207T180000Z-abcdef--stalled.csv");
      execFileSync("mkfifo", [stalled]);
      const env = cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, name: "stalled-read", dropDir: drop.dir },
        { SHUTDOWN_GRACE_MS: String(GRACE_MS) },
      );
      const run = spawnNode("workers/cli.js", ["run", "--deadline", `${DEADLINE_MS / 1000}s`], env);
      cleanups.push(async () => {
        // A thread of the file system still waits on the pipe: opened for writing here, it lets go.
        execFileSync("sh", ["-c", `exec 3>"${stalled}"; sleep 0.2`]);
        if (run.child.exitCode === null) run.child.kill("SIGKILL");
        await run.exited;
      });
      await until(
        async () => Promise.resolve(run.output().includes("does not answer")),
        LIMIT_MS,
        `the hard stop\n${run.output()}`,
      );
      expect(run.output()).toMatch(
        /what it waits for does not answer: [^\n]*the drop folder's file \S+stalled\.csv/,
      );
    },
    LIMIT_MS + 10_000,
  );
});
