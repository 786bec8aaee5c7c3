import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { until } from "../support/processes.js";
import { processesStartedIn } from "../support/run-processes.js";

const ROOT = resolve(import.meta.dirname, "../..");
const cleanups = cleanupsAfterEach();

interface Interrupted {
  readonly dir: string;
  readonly exit: { code: number | null; signal: NodeJS.Signals | null };
  readonly output: string;
}

/**
 * Runs test/fixtures/interrupted-run (the project's global setups and a test that starts what test
 * files start) as `npm test` runs vitest, in a process group of its own as a terminal's foreground job
 * is, with a TMPDIR of this test's; once everything is up, `interrupt` stops it.
 */
async function interruptedRun(interrupt: (vitestPid: number) => void): Promise<Interrupted> {
  const base = await mkdtemp(join(tmpdir(), "interrupted-"));
  cleanups.push(() => rm(base, { recursive: true, force: true }));
  const dir = join(base, "tmp");
  await mkdir(dir);
  const ready = join(base, "ready");
  // The run starts its own servers, as on a machine with nothing running.
  const SERVERS_GIVEN = new Set(["REDIS_URL", "TEST_DATABASE_URL", "RESULTS_DATABASE_URL", "DOCKER_HOST"]);
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVERS_GIVEN.has(name))),
    TMPDIR: dir,
    HOLD_READY_FILE: ready,
    CI: "true",
  };
  const vitest = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules/vitest/vitest.mjs"),
      "run",
      "--config",
      "test/fixtures/interrupted-run/vitest.config.ts",
    ],
    { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  vitest.stdout.on("data", (d: Buffer) => (output += d.toString()));
  vitest.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<Interrupted["exit"]>((done) =>
    vitest.once("exit", (code, signal) => {
      done({ code, signal });
    }),
  );
  cleanups.push(async () => {
    if (vitest.exitCode === null && vitest.signalCode === null) process.kill(-(vitest.pid ?? 0), "SIGKILL");
    await exited;
  });
  await until(
    async () =>
      (await readFile(ready).then(
        () => true,
        () => false,
      )) || vitest.exitCode !== null,
    90_000,
    "the fixture run to start Redis, PostgreSQL, sshd and a worker",
  );
  expect(vitest.exitCode, output).toBeNull();
  interrupt(vitest.pid ?? 0);
  return { dir, exit: await exited, output };
}

describe("an interrupted test run", () => {
  it("when Ctrl-C reaches the run's process group, then no process it started is left and its temporary folders are gone", async () => {
    const run = await interruptedRun((pid) => {
      process.kill(-pid, "SIGINT");
    });
    expect(run.exit, run.output).toEqual({ code: 130, signal: null });
    expect(processesStartedIn(run.dir)).toEqual([]);
    expect(await readdir(run.dir)).toEqual([]);
  });

  it("when only the runner gets SIGTERM, then it stops what it started and removes its temporary folders", async () => {
    const run = await interruptedRun((pid) => {
      process.kill(pid, "SIGTERM");
    });
    expect(run.exit, run.output).toEqual({ code: 143, signal: null });
    expect(processesStartedIn(run.dir)).toEqual([]);
    expect(await readdir(run.dir)).toEqual([]);
  });
});
