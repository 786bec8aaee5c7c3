import { execFileSync } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { ensureDropFolder, dropFolder } from "../../src/ingest/drop-folder.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { releasePipe } from "../support/named-pipe.js";
import { tempDropDir } from "../support/drop.js";
import { finish } from "../support/cli-run.js";
import { spawnNode, START_UP_MS, until } from "../support/processes.js";
import { z } from "zod";

// A read of the drop folder that never returns: a named pipe no one writes to, in processing/ under a
// claimed file's name. Opening it waits for ever, as a read of a hung network share does.

const API_KEY = "irs_live_e2e_key_0123456789";
const DEADLINE_MS = START_UP_MS + 2_000;
const GRACE_MS = 500;
/** Generous: the hard stop comes at the deadline, the grace and the closing bound; a margin on top. */
const LIMIT_MS = DEADLINE_MS + GRACE_MS + CLOSING_BOUND_MS + 15_000;

/** Whether the process ended on its own within `ms`: the thread the read holds does not keep it alive. */
async function endedWithin(exited: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>(
    (resolve) =>
      (timer = setTimeout(() => {
        resolve(false);
      }, ms)),
  );
  const ended = await Promise.race([exited.then(() => true as const), late]);
  clearTimeout(timer);
  return ended;
}

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

/** A drop folder whose processing/ holds a claimed file that is a named pipe no one writes to. */
async function stalledFolder(name: string, more: Record<string, string> = {}) {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  await ensureDropFolder(dropFolder(drop.dir));
  const stalled = join(drop.dir, "processing", "20261207T180000Z-abcdef--stalled.csv");
  execFileSync("mkfifo", [stalled]);
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name, dropDir: drop.dir },
    { SHUTDOWN_GRACE_MS: String(GRACE_MS), ...more },
  );
  return { drop, stalled, env };
}

describe("a drop folder read that never returns", () => {
  it(
    "when a claimed file's read never returns, then run ends, exit not 0, naming that file, while the read still holds its thread",
    async () => {
      const { stalled, env } = await stalledFolder("stalled-read");
      const run = spawnNode("workers/cli.js", ["run", "--deadline", `${DEADLINE_MS}ms`], env);
      cleanups.push(async () => {
        // A thread of the file system still waits on the pipe: opened for writing here, it lets go.
        releasePipe(stalled);
        if (run.child.exitCode === null) run.child.kill("SIGKILL");
        await run.exited;
      });
      expect(await endedWithin(run.exited, LIMIT_MS), run.output()).toBe(true);
      const { code, signal } = await run.exited;
      // Exit 1, or SIGKILL (status 137) where exit() would wait for the thread the read holds.
      expect(code === 1 || signal === "SIGKILL", `${code} ${signal}\n${run.output()}`).toBe(true);
      expect(run.output()).toMatch(/does not answer: [^\n]*the drop folder's file \S+stalled\.csv/);
    },
    LIMIT_MS + 10_000,
  );

  it(
    "when a claimed file's read never returns under start, then later scans take a file dropped after the first scan, name the hung file in status without opening it again, and SIGTERM ends the process naming it",
    async () => {
      const { drop, stalled, env } = await stalledFolder("stalled-start", {
        SETTLE_MS: "0",
        HTTP_ADDR: "127.0.0.1:0",
      });
      const start = spawnNode("workers/cli.js", ["start", "--schedule", "*/1 * * * * *"], env);
      cleanups.push(async () => {
        releasePipe(stalled);
        if (start.child.exitCode === null && start.child.signalCode === null) start.child.kill("SIGKILL");
        await start.exited;
      });
      // Dropped once the startup scan has opened the hung file (it warns of its batch missing from Redis).
      await until(
        () => Promise.resolve(/stalled\.csv/.test(start.output())),
        15_000,
        "a scan to meet the hung file",
      );
      await writeFile(
        join(drop.dir, "late.csv"),
        "external_id,currency,destination_country,archive_policy\nL-1,EUR,DE,eu-10y\n",
      );
      await until(
        async () => (await readdir(join(drop.dir, "reports"))).some((n) => n.startsWith("late.csv.")),
        15_000,
        `the report of the file dropped later\n${start.output()}`,
      );
      const status = await finish(
        spawnNode("workers/cli.js", ["status", "--json"], { ...env, LOG_LEVEL: "silent" }),
      );
      const passes = z
        .object({
          passes: z.array(z.looseObject({ left: z.array(z.object({ file: z.string(), why: z.string() })) })),
        })
        .parse(JSON.parse(status.output.slice(status.output.indexOf("{")))).passes;
      expect(passes.flatMap((p) => p.left).map((f) => `${f.file} ${f.why}`)).toContainEqual(
        expect.stringMatching(/stalled\.csv .*still being read since \d\d:\d\d UTC, not answering/),
      );
      start.child.kill("SIGTERM");
      expect(await endedWithin(start.exited, LIMIT_MS), start.output()).toBe(true);
      const { code, signal } = await start.exited;
      // The hung read holds a thread that exit() would wait for: the process names it and ends by SIGKILL.
      expect({ code, signal }, start.output()).toEqual({ code: null, signal: "SIGKILL" });
      const held = /the file system does not answer: ([^\n]*)/.exec(start.output())?.[1] ?? "";
      // Opened once by this process, however many scans met it since: one thread held, not one a scan.
      expect(held.match(/stalled\.csv/g), start.output()).toHaveLength(1);
    },
    LIMIT_MS + 30_000,
  );
});
