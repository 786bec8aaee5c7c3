import { readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";

/**
 * The processes a test run started, found by the folder the run gave them: every process started after
 * the run's global setup inherits `TMPDIR=<the run's folder>`, and the servers it starts name a folder
 * under it in their arguments (postgres' `-D`, sshd's `-f`) or work in one (redis-server's `--dir`). Read from /proc,
 * synchronously, so that a run being interrupted can still do it on its way out (Linux; elsewhere there
 * is no /proc and nothing is found).
 */
export interface RunProcess {
  readonly pid: number;
  readonly args: string;
}

const ENOUGH_TO_STOP_MS = 1000;
const LAST_CHANCE_MS = 3000;
const POLL_MS = 50;

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "latin1");
  } catch {
    return undefined; // gone meanwhile, or another user's process
  }
}

/** The folder a process works in, as the kernel names it (" (deleted)" once it is removed). */
function workingFolder(pid: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, "");
  } catch {
    return undefined; // gone meanwhile, or another user's process
  }
}

/**
 * Whether a `/proc/<pid>` belongs to a process started inside `dir`: by its arguments, its TMPDIR, or
 * the folder it works in. redis-server writes its process title over both its arguments and its
 * environment, so only the last names it: it works in its `--dir`.
 */
function startedIn(pid: string, dir: string): string | undefined {
  const args = readText(`/proc/${pid}/cmdline`)?.split("\0").join(" ").trim();
  if (args === undefined || args === "") return undefined; // a zombie has neither
  if (args.includes(`${dir}/`) || workingFolder(pid)?.startsWith(`${dir}/`) === true) return args;
  const env = readText(`/proc/${pid}/environ`)?.split("\0") ?? [];
  const tmp = env.find((entry) => entry.startsWith("TMPDIR="))?.slice("TMPDIR=".length);
  return tmp === dir || tmp?.startsWith(`${dir}/`) === true ? args : undefined;
}

/** The live processes started inside `dir` (its own included, the calling process never). */
export function processesStartedIn(dir: string): RunProcess[] {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.flatMap((pid) => {
    if (Number(pid) === process.pid) return [];
    const args = startedIn(pid, dir);
    return args === undefined ? [] : [{ pid: Number(pid), args }];
  });
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ended meanwhile
  }
}

/**
 * Stops every process started inside `dir`, then removes `dir`: SIGTERM first (Redis and PostgreSQL
 * shut down cleanly on it), SIGKILL for what still runs a second later; processes that appear meanwhile
 * (a test still starting one) are caught by the next look. Synchronous, for a process's "exit" event.
 * Returns what it found running.
 */
export function stopRunSync(dir: string): RunProcess[] {
  const found = new Map<number, RunProcess>();
  const started = Date.now();
  for (;;) {
    const running = processesStartedIn(dir);
    if (running.length === 0) break;
    const late = Date.now() - started > ENOUGH_TO_STOP_MS;
    for (const proc of running) {
      if (!found.has(proc.pid) || late) signal(proc.pid, late ? "SIGKILL" : "SIGTERM");
      found.set(proc.pid, proc);
    }
    if (Date.now() - started > ENOUGH_TO_STOP_MS + LAST_CHANCE_MS) break;
    sleepSync(POLL_MS);
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  return [...found.values()];
}
