import { z } from "zod";
import { capacitySchema } from "./capacity.js";
import type { FaultKind } from "./fault-plan.js";

/**
 * The JSON of `stats()` and `GET /__sim/stats`. Exported as a schema so that tests and benchmarks that
 * read it over HTTP parse it instead of casting it.
 */
export const simulatorStatsSchema = z.object({
  requests: z.object({
    /** Requests to `POST /api/v1/invoices`, whatever their answer (lost ones included). */
    total: z.number(),
    /** Answers sent, by status code; lost answers are counted under `faults.lost` instead. */
    byStatus: z.record(z.string(), z.number()),
  }),
  effects: z.object({
    total: z.number(),
    distinctKeys: z.number(),
    keysWithMultipleEffects: z.number(),
    multipleEffectKeys: z.array(z.string()),
    distinctExternalIds: z.number(),
    externalIdsWithMultipleEffects: z.number(),
    multipleEffectExternalIds: z.array(z.string()),
  }),
  replays: z.number(),
  inFlightConflicts: z.number(),
  keyReuseRejections: z.number(),
  inFlight: z.number(),
  faults: z.object({ error: z.number(), throttle: z.number(), lost: z.number() }),
  developerKeysIssued: z.number(),
  requestLog: z.object({ capacity: z.number(), dropped: z.number() }),
  /** The capacity model: its limit (null: none), requests admitted and refused, in all and per second. */
  capacity: z.object({
    limit: capacitySchema.nullable(),
    admitted: z.number(),
    refused: z.number(),
    inFlight: z.number(),
    perSecond: z.array(z.object({ second: z.number(), admitted: z.number(), refused: z.number() })),
  }),
});

export type SimulatorStats = z.infer<typeof simulatorStatsSchema>;

/** Plain counters of the invoice API, bumped on the hot path: no allocation per request. */
export class RequestCounters {
  total = 0;
  replays = 0;
  inFlightConflicts = 0;
  keyReuseRejections = 0;
  readonly faults: Record<FaultKind, number> = { error: 0, throttle: 0, lost: 0 };
  readonly #byStatus = new Map<number, number>();

  answered(status: number): void {
    this.#byStatus.set(status, (this.#byStatus.get(status) ?? 0) + 1);
  }

  byStatus(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [status, n] of [...this.#byStatus].sort((a, b) => a[0] - b[0])) out[String(status)] = n;
    return out;
  }

  clear(): void {
    this.total = 0;
    this.replays = 0;
    this.inFlightConflicts = 0;
    this.keyReuseRejections = 0;
    this.faults.error = 0;
    this.faults.throttle = 0;
    this.faults.lost = 0;
    this.#byStatus.clear();
  }
}
