import { spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

/** Path of a built entry point (npm test builds first: see the `pretest` script). */
export function distPath(relative: string): string {
  return fileURLToPath(new URL(`../../dist/${relative}`, import.meta.url));
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The environment of a process a test starts: `env` and no more of the test's own, but PATH, and TMPDIR,
 * so that the process and its temporary files are the run's (test/setup/run-scope-global.ts).
 */
export function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env["PATH"] ?? "", TMPDIR: tmpdir(), ...env };
}

/**
 * What a CLI process takes to start on a busy test machine (Node and its modules, Redis, the checks at
 * start): a run's --deadline counts from its process's start, so a test whose pass must get somewhere
 * before its deadline gives it this on top.
 */
export const START_UP_MS = 4_000;

/** Starts a node process of the project with the given environment; collects its output. */
export function spawnNode(script: string, args: readonly string[], env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, [distPath(script), ...args], {
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      resolve({ code, signal });
    }),
  );
  return { child, output: () => output, exited };
}

/** Waits until `check` holds, polling: for state held by another process, where no event can reach us. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The URL `invoice-relay console` serves at, once it has said so ("serving http://…/ until Ctrl-C"). */
export function servingUrl(proc: Spawned): Promise<string> {
  const said = () => /serving (http:\/\/127\.0\.0\.1:\d+)\/ until Ctrl-C/.exec(proc.output())?.[1];
  return new Promise((resolve, reject) => {
    const check = () => {
      const url = said();
      if (url === undefined) return;
      stop();
      resolve(url);
    };
    const ended = () => {
      stop();
      reject(new Error(`the console ended without serving:\n${proc.output()}`));
    };
    const stop = () => {
      proc.child.stderr?.off("data", check);
      proc.child.off("exit", ended);
    };
    proc.child.stderr?.on("data", check);
    proc.child.once("exit", ended);
    check();
  });
}
