import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A spawned entry point of the project (from dist/), its exit and the end of its output. */
export interface Spawned {
  readonly label: string;
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  /** Resolves when `readyMarker` shows in the output; never, if it does not. */
  readonly ready: Promise<void>;
  readyAt(): number | undefined;
  running(): boolean;
  /** The last lines of stdout + stderr, for a failure message. */
  tail(): string;
  /** What the process printed on stdout (its last 64 KB). */
  stdout(): string;
  /** Sends `signal` and waits for the exit. */
  stop(signal: NodeJS.Signals): Promise<Exit>;
}

const TAIL_CHARS = 8000;
const STDOUT_CHARS = 64 * 1024;

const live = new Set<ChildProcess>();

/** SIGKILLs every process spawned here that is still running: the chaos run is being abandoned. */
export function killAllSpawned(): void {
  for (const child of live) child.kill("SIGKILL");
}

/** `relative` is a path under dist/, e.g. `workers/cli.js`. */
export function distEntry(relative: string): string {
  return fileURLToPath(new URL(`../../${relative}`, import.meta.url));
}

export function spawnEntry(
  label: string,
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  readyMarker?: string,
): Spawned {
  // Only what is given: nothing of the caller's environment (IDEMPOTENCY_NAMESPACE, a REDIS_URL) leaks in.
  const child = spawn(process.execPath, [distEntry(script), ...args], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let tail = "";
  let readyAt: number | undefined;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const onData = (data: Buffer) => {
    const text = data.toString();
    if (readyAt === undefined && readyMarker !== undefined && (tail + text).includes(readyMarker)) {
      readyAt = Date.now();
      markReady();
    }
    tail = (tail + text).slice(-TAIL_CHARS);
  };
  let stdout = "";
  child.stdout.on("data", (data: Buffer) => {
    stdout = (stdout + data.toString()).slice(-STDOUT_CHARS);
  });
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  let done = false;
  const exited = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      done = true;
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    label,
    child,
    exited,
    ready,
    readyAt: () => readyAt,
    running: () => !done,
    tail: () => tail,
    stdout: () => stdout,
    stop: async (signal) => {
      if (!done) child.kill(signal);
      return exited;
    },
  };
}

export function describeExit(exit: Exit): string {
  return exit.signal === null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
}
