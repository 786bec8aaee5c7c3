import { setTimeout as sleep } from "node:timers/promises";

/**
 * One signal for every wait of a pass: aborted when the process is told to stop (SIGTERM, SIGINT) or
 * when the pass's deadline comes, whichever is first. Each wait (Redis, the service, each SFTP step,
 * the file system, a batch waiting for its file) is given this signal, never a timeout of its own, so a
 * pass ends by its deadline whatever it was waiting for, and says what that was.
 */
export function passSignal(stop: AbortSignal, deadline: number | undefined): AbortSignal {
  if (deadline === undefined) return stop;
  const controller = new AbortController();
  // Unref'd: a pass that is done before its deadline is not kept alive by it.
  const timer = setTimeout(
    () => {
      controller.abort(DEADLINE);
    },
    Math.max(0, deadline - Date.now()),
  ).unref();
  stop.addEventListener("abort", () => {
    clearTimeout(timer);
  });
  return AbortSignal.any([stop, controller.signal]);
}

/**
 * Waits `ms`, or less when the pass's signal ends first: a pause between two looks of a pass. True when
 * the signal ended it.
 */
export async function pauseWithin(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return sleep(ms, undefined, signal === undefined ? {} : { signal }).then(
    () => false,
    () => true,
  );
}

/** The reason a pass's signal is aborted with at its deadline. */
export const DEADLINE = "deadline";

/** The reason a scan of `start` cuts a read of a claimed file: nothing delivered while a scan fell due. */
export const NEXT_SCAN = "next scan";

/** What ended a pass's waits, in an operator's words: its deadline, or a signal to stop. */
export function endedBy(signal: AbortSignal): string {
  if (signal.reason === DEADLINE) return "the pass's --deadline";
  if (signal.reason === NEXT_SCAN) return "the time of the next scan";
  return typeof signal.reason === "string" && signal.reason.startsWith("SIG")
    ? `a signal to stop (${signal.reason})`
    : "a signal to stop";
}
