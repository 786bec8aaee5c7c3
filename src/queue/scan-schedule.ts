import { defaultRepeatStrategy } from "bullmq";

/**
 * Whether BullMQ's job scheduler can follow `cron` in time zone `tz` (checked as it will read it), so a
 * command refuses a bad `--schedule` before it opens anything.
 */
export function isScanSchedule(cron: string, tz: string | undefined): boolean {
  try {
    defaultRepeatStrategy(Date.now(), { pattern: cron, ...(tz === undefined ? {} : { tz }) });
    return true;
  } catch {
    return false;
  }
}

/** When the scan after `now` is due on `cron` in time zone `tz` (BullMQ's reading); undefined if never. */
function nextScanAt(cron: string, tz: string | undefined, now: number): number | undefined {
  return defaultRepeatStrategy(now, { pattern: cron, ...(tz === undefined ? {} : { tz }) });
}

/** setTimeout's longest delay (2^31 - 1 ms, 24.8 days): a longer one would fire at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Calls `due` each time a scan falls due on `cron` in time zone `tz`, until the answer is called. */
export function onEachScanDue(cron: string, tz: string | undefined, due: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const at = (next: number | undefined): void => {
    if (next === undefined) return;
    timer = setTimeout(
      () => {
        const now = Date.now();
        if (now >= next) due(); // else further off than setTimeout's longest delay
        at(now < next ? next : nextScanAt(cron, tz, Math.max(now, next)));
      },
      Math.min(next - Date.now(), LONGEST_TIMER_MS),
    ).unref();
  };
  at(nextScanAt(cron, tz, Date.now()));
  return () => {
    clearTimeout(timer);
  };
}
