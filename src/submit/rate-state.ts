import { z } from "zod";
import type { RateState } from "./send-rate.js";

/**
 * How far ahead of the Redis server's clock a stored time may be. Processes write times on the server's
 * clock as they estimate it between calls, off by a round trip at most; a second is beyond any round
 * trip, and a time further ahead was written by a clock that has since stepped back (or not by a pacer).
 */
export const STATE_AHEAD_MS = 1000;

const rate = z.number().positive();
const time = z.number().nonnegative();

const rateStateSchema = z.object({
  version: z.number().int().nonnegative(),
  rate,
  at: time,
  max: z.number().nonnegative(),
  refusingSince: time,
  estimates: z.array(rate).max(10).optional(),
  cutAt: time.optional(),
  returnedAt: time.optional(),
  reached: rate.optional(),
});

/**
 * The learned rate's state as the fleet's budget stores it (JSON, written by src/submit/send-pacer.ts),
 * checked against the server's clock `now`: undefined when it is not one a pacer could have written
 * (unreadable, a field missing or of another type, a rate not above 0, a time more than STATE_AHEAD_MS
 * ahead of `now`). Such a state is never trusted; the pacer replaces it at once.
 */
export function parseRateState(text: string, now: number): RateState | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const parsed = rateStateSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const state = parsed.data;
  const latest = Math.max(state.at, state.refusingSince, state.cutAt ?? 0, state.returnedAt ?? 0);
  return latest > now + STATE_AHEAD_MS ? undefined : state;
}
