import { rmSync } from "node:fs";
import { chmod, mkdtemp } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { stopRunSync, type RunProcess } from "../support/run-processes.js";

const STOP_ON: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

function report(left: readonly RunProcess[], why: string): void {
  if (left.length === 0) return;
  const lines = left.map((p) => `  ${p.pid} ${p.args.slice(0, 160)}`).join("\n");
  process.stderr.write(`[tests] ${why}, stopped ${left.length} process(es) the run started:\n${lines}\n`);
}

/**
 * The first global setup, so its teardown runs last: a folder of the run's own becomes TMPDIR, so every
 * temporary folder and every process the run starts (the other global setups' servers, the test files'
 * servers, folders and CLI processes, in every worker process) is inside it or knows it. When the run
 * ends, by its teardown or by Ctrl-C, SIGTERM or SIGHUP, what it started is stopped and the folder
 * removed (test/support/run-processes.ts).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = await mkdtemp(join(tmpdir(), "invoice-relay-test-"));
  // Readable by others: a private PostgreSQL run for root runs as the `postgres` user, in a folder in here.
  await chmod(dir, 0o755);
  process.env["TMPDIR"] = dir;
  let stopped = false;
  const stop = (why: string) => {
    if (stopped) return;
    stopped = true;
    report(stopRunSync(dir), why);
  };
  const onExit = () => {
    stop("interrupted");
    // Vitest's own folder of transformed modules, which it removes only when it ends by itself.
    rmSync(project.tmpDir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    process.exitCode ??= 128 + constants.signals[signal];
    process.exit(); // runs onExit
  };
  process.once("exit", onExit);
  for (const name of STOP_ON) process.once(name, onSignal);
  return () => {
    process.off("exit", onExit);
    for (const name of STOP_ON) process.off(name, onSignal);
    stop("at the end of the run");
  };
}
