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
export function nextScanAt(cron: string, tz: string | undefined, now: number): number | undefined {
  return defaultRepeatStrategy(now, { pattern: cron, ...(tz === undefined ? {} : { tz }) });
}
