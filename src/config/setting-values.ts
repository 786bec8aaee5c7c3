import { z } from "zod";
import { parseDuration } from "./duration.js";

/** The kinds of value the settings take (src/config/settings.ts), each refusing in one sentence. */

/**
 * A whole number from `min` to `max`, in decimal digits (spaces around them allowed): `1e3`, `0x10`, `1.5`
 * and `Infinity` are refused rather than read as something the operator did not write. Every failure says
 * the same sentence, naming the range.
 */
export const int = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, message)
    .transform(Number)
    .pipe(z.number().min(min, message).max(max, message));
};
export const list = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p !== ""),
  )
  .pipe(z.array(z.string()).min(1));
/** A duration of at least 1s (e.g. 90s, 45m, 6h, 1h30m) in ms; `examples` are named when it is not one. */
export const duration = (examples: string) =>
  z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms < 1000) {
      ctx.addIssue({ code: "custom", message: `must be a duration of at least 1s, such as ${examples}` });
      return z.NEVER;
    }
    return ms;
  });
/**
 * The smallest INGEST_WINDOW: the rows ingest keeps under way at once (4 chunks of 250,
 * src/ingest/ingest-file.ts), so a window never cuts ingest's own pipeline short.
 */
export const INGEST_WINDOW_MIN = 1000;
const INGEST_WINDOW_MAX = 10_000_000;
const windowMessage = `must be 0 (no window) or a whole number from ${INGEST_WINDOW_MIN} to ${INGEST_WINDOW_MAX}`;
export const ingestWindow = z
  .string()
  .trim()
  .regex(/^\d+$/, windowMessage)
  .transform(Number)
  .pipe(
    z.number().refine((n) => n === 0 || (n >= INGEST_WINDOW_MIN && n <= INGEST_WINDOW_MAX), windowMessage),
  );
export const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"], { error: "must be true or false" })
  .transform((v) => v === "true" || v === "1" || v === "yes");

/**
 * Whether a URL parses with a host, and its user name and password decode: what the Redis client needs
 * of it (it would otherwise fail later with a bare "Invalid URL" or "URI malformed", naming no setting).
 */
export function readsAsUrl(text: string): boolean {
  try {
    const url = new URL(text);
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return url.hostname !== "";
  } catch {
    return false;
  }
}
