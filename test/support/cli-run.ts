import { spawnNode, type Spawned } from "./processes.js";

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** stdout and stderr together, in arrival order. */
  readonly output: string;
  readonly ms: number;
}

/**
 * Runs one command of the real CLI to its end. A process still running after `limitMs` is killed, so a
 * hang fails the test with its output instead of timing the whole file out.
 */
export async function runCli(
  args: readonly string[],
  env: Record<string, string>,
  limitMs = 30_000,
): Promise<CliResult> {
  return finish(spawnNode("workers/cli.js", args, env), limitMs);
}

/** Waits for a spawned CLI process to end (killing it after `limitMs`) and collects what it printed. */
export async function finish(proc: Spawned, limitMs = 30_000): Promise<CliResult> {
  const started = Date.now();
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), limitMs);
  try {
    const { code, signal } = await proc.exited;
    return { code, signal, output: proc.output(), ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}
