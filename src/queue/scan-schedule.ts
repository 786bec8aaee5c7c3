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
