import { z } from "zod";
import type { RateState } from "./send-rate.js";

const rateStateSchema = z.object({
  version: z.number(),
  rate: z.number(),
  at: z.number(),
  max: z.number(),
  refusingSince: z.number(),
  estimates: z.array(z.number()).max(10).optional(),
  cutAt: z.number().optional(),
  returnedAt: z.number().optional(),
  reached: z.number().optional(),
});

/**
 * The learned rate's state as the fleet's budget stores it (JSON, written by src/submit/send-pacer.ts),
 * checked; undefined when it is not one (unreadable, or written by a version that shaped it otherwise).
 */
export function parseRateState(text: string): RateState | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const parsed = rateStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
