import { PASS_RECORD_WAIT_MS } from "../use-cases/pass-watch.js";
import { unansweredCommands, type RedisClient } from "../ledger/redis-client.js";
import { openWaits, threadsHeld } from "../lifecycle/waits.js";
import { ALERT_DRAIN_MS } from "./alerts.js";

/**
 * How long closing may take after the grace: the alerts' delivery (ALERT_DRAIN_MS) and the few writes
 * on the way out (the pass's record, the last counts, the export's cut-off), each bounded to
 * PASS_RECORD_WAIT_MS, five at most.
 */
export const CLOSING_BOUND_MS = ALERT_DRAIN_MS + 5 * PASS_RECORD_WAIT_MS;

/**
 * Ends the process with exit 1 if it is still alive `ms` from now: something it waits for does not
 * answer at all (a Redis frozen with its connections open answers nothing and closes nothing, so no
 * command fails). The ledger and the queue survive such an exit as they survive a crash: what was in
 * hand is taken again by the next process with the same keys. `why` says what it was still doing,
 * `unanswered` what it was waiting for then (none: said as unknown, never guessed); stopped by the
 * returned function.
 */
export function hardStopAfter(
  ms: number,
  why: string,
  out: NodeJS.WritableStream,
  unanswered: () => readonly string[] = () => [],
): () => void {
  const timer = setTimeout(() => {
    const waits = unanswered();
    out.write(
      `${why}; ${waits.length === 0 ? "something it waits for does not answer" : `what it waits for does not answer: ${waits.join("; ")}`}. ` +
        "Exiting 1: what was left is taken by the next run with the same keys\n",
    );
    endProcess(1);
  }, ms);
  timer.unref();
  return () => {
    clearTimeout(timer);
  };
}

/**
 * Ends the process now with `code`. A file-system call a pass left unanswered (a hung share) holds one of
 * Node's threads, and exit() waits for it without end (libuv joins its threads at exit): with any, the
 * process ends itself with SIGKILL instead (exit status 137), once what it waits for is said.
 */
export function endProcess(code: number): void {
  if (threadsHeld().length > 0) process.kill(process.pid, "SIGKILL");
  process.exit(code);
}

/**
 * The end of a command: with file-system calls still unanswered (threadsHeld), which would keep the
 * process alive for ever, they are named on `out` and the process ends (endProcess); otherwise it ends
 * by itself, with `code`.
 */
export function endCommand(code: number, out: NodeJS.WritableStream): void {
  process.exitCode = code;
  const held = threadsHeld();
  if (held.length === 0) return;
  out.write(
    `invoice-relay: the file system does not answer: ${held.join("; ")}. Exiting without waiting for it ` +
      `(exit ${code === 0 ? 1 : code}, ended by SIGKILL: status 137)\n`,
  );
  endProcess(code === 0 ? 1 : code);
}

/** What the process waits for now: Redis (`target`) with commands unanswered, and the open waits. */
export function unanswered(redis: RedisClient | undefined, target: string): string[] {
  const commands = redis === undefined ? 0 : unansweredCommands(redis);
  return [...(commands > 0 ? [`Redis at ${target} (${commands} commands unanswered)`] : []), ...openWaits()];
}
