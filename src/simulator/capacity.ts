import { z } from "zod";
import { RETRY_AFTER_FORMS } from "./service-answers.js";
import { SimulatorOptionsError } from "./simulator-options-error.js";

/**
 * The service's capacity, as a real one limits its callers: a token bucket (`ratePerSec` tokens a second,
 * at most `burst` kept), a ceiling of requests in flight, and an answer that slows as the bucket empties
 * (requests queue inside the service). `ratePerSec` 0 refuses everything (a daily quota spent).
 */
export const capacitySchema = z.strictObject({
  ratePerSec: z
    .number({ error: "capacity.ratePerSec must be a number" })
    .min(0, "capacity.ratePerSec must be 0 or more"),
  burst: z.number().int("capacity.burst must be a whole number").min(1, "capacity.burst must be 1 or more"),
  maxInFlight: z
    .number()
    .int("capacity.maxInFlight must be a whole number")
    .min(1, "capacity.maxInFlight must be 1 or more"),
  /** Latency added when the bucket is empty; it grows with the square of how empty the bucket is. */
  latencyAtCapacityMs: z
    .number()
    .int("capacity.latencyAtCapacityMs must be whole milliseconds")
    .min(0, "capacity.latencyAtCapacityMs must be 0 or more"),
  /**
   * Quota windows besides the bucket, as e-invoicing APIs publish them (10/s, 30/min and 180/h at once):
   * at most `limit` requests admitted in any `seconds`; a request past one is refused with Retry-After the
   * seconds until a slot of it frees.
   */
  windows: z
    .array(
      z.strictObject({
        limit: z
          .number()
          .int("capacity.windows[].limit must be a whole number")
          .min(1, "capacity.windows[].limit must be 1 or more"),
        seconds: z.number().positive("capacity.windows[].seconds must be more than 0"),
        /** Counted from each whole window of the clock (a quota reset on the minute or hour), not over the
         * last `seconds` (a sliding window, the default). */
        fixed: z.boolean().optional(),
      }),
    )
    .optional(),
  /** The Retry-After of every refusal for the rate, in place of the seconds to the next token (null: those). */
  retryAfterSeconds: z
    .number()
    .int("capacity.retryAfterSeconds must be whole seconds")
    .min(0, "capacity.retryAfterSeconds must be 0 or more")
    .nullable()
    .optional(),
  /** How a request over the capacity is refused: 429, or 503 with Retry-After (a service shedding load). */
  refuseWith: z.union([z.literal(429), z.literal(503)]).optional(),
  /** How a refusal says its wait (service-answers.ts): whole seconds (the default), none, 0, the exact
   * wait as a decimal, or an HTTP date on a clock `clockSkewMs` off (with a `Date` header on that clock). */
  retryAfterForm: z.enum(RETRY_AFTER_FORMS).optional(),
  clockSkewMs: z.number().int("capacity.clockSkewMs must be whole milliseconds").optional(),
});
export type Capacity = z.infer<typeof capacitySchema>;

/** A partial change; `null` removes the limit. */
export const capacityPatchSchema = capacitySchema.partial().nullable();
export type CapacityPatch = z.infer<typeof capacityPatchSchema>;

export const DEFAULT_CAPACITY: Capacity = {
  ratePerSec: 100,
  burst: 10,
  maxInFlight: 64,
  latencyAtCapacityMs: 0,
};

/** Retry-After while nothing is admitted at all (`ratePerSec` 0): come back in a minute. */
const QUOTA_SPENT_RETRY_AFTER_S = 60;
/** The least Retry-After of a refusal: the header's delay-seconds are whole seconds (RFC 9110 §10.2.3), and
 * public APIs round a wait up and never ask for 0 (GitHub, Stripe, AWS answer 1 or more). */
const LEAST_RETRY_AFTER_S = 1;
/** Seconds of per-second counts kept for `stats()`. */
const SECONDS_KEPT = 600;

export type Admission =
  | { readonly admitted: true; readonly extraLatencyMs: number }
  | {
      readonly admitted: false;
      readonly retryAfterSeconds: number;
      /** The wait until a request would be admitted, as exactly as the model knows it (0: not known). */
      readonly waitMs: number;
      readonly reason: "rate" | "in-flight" | "quota";
      readonly status: 429 | 503;
    };

export interface CapacitySecond {
  /** Epoch second. */
  readonly second: number;
  readonly admitted: number;
  readonly refused: number;
}

/** The capacity model: admits or refuses each request that passed the rules; counts both per second. */
export class CapacityModel {
  #limit: Capacity | null;
  #tokens = 0;
  #refilledAt = 0;
  #inFlight = 0;
  /** When each request admitted within the longest quota window was (a sliding log). */
  #log: number[] = [];
  #admitted = 0;
  #refused = 0;
  readonly #seconds: { second: number; admitted: number; refused: number }[] = [];

  constructor(
    limit: Capacity | null,
    private readonly now: () => number = Date.now,
  ) {
    this.#limit = limit;
    this.#tokens = limit?.burst ?? 0;
    this.#refilledAt = now();
  }

  get limit(): Capacity | null {
    return this.#limit;
  }

  /** Applies a partial change (or `null`: no limit); the tokens kept are clamped to the new burst. */
  set(patch: unknown): Capacity | null {
    const result = capacityPatchSchema.safeParse(patch);
    if (!result.success)
      throw new SimulatorOptionsError(
        `invalid capacity: ${result.error.issues.map((i) => i.message).join("; ")}`,
      );
    this.#refill();
    const next =
      result.data === null
        ? null
        : capacitySchema.parse({ ...(this.#limit ?? DEFAULT_CAPACITY), ...result.data });
    if (this.#limit === null && next !== null) this.#tokens = next.burst;
    this.#limit = next;
    if (next !== null) this.#tokens = Math.min(this.#tokens, next.burst);
    return next;
  }

  admit(): Admission {
    const limit = this.#limit;
    if (limit === null) return { admitted: true, extraLatencyMs: 0 };
    this.#refill();
    if (this.#inFlight >= limit.maxInFlight) return this.#refuse(0, "in-flight");
    const quota = this.#quota(limit);
    if (quota !== undefined) return this.#refuse(quota, "quota");
    if (this.#tokens < 1) {
      const ms =
        limit.ratePerSec === 0
          ? QUOTA_SPENT_RETRY_AFTER_S * 1000
          : ((1 - this.#tokens) / limit.ratePerSec) * 1000;
      return this.#refuse(ms, "rate");
    }
    this.#tokens -= 1;
    if ((limit.windows ?? []).length > 0) this.#log.push(this.now());
    this.#inFlight++;
    this.#count().admitted++;
    this.#admitted++;
    const emptiness = 1 - this.#tokens / limit.burst;
    return { admitted: true, extraLatencyMs: Math.round(limit.latencyAtCapacityMs * emptiness * emptiness) };
  }

  /** An admitted request was answered (or dropped): its place in flight is free again. */
  release(): void {
    if (this.#inFlight > 0) this.#inFlight--;
  }

  stats() {
    return {
      limit: this.#limit,
      admitted: this.#admitted,
      refused: this.#refused,
      inFlight: this.#inFlight,
      perSecond: this.#seconds.map((s) => ({ ...s })),
    };
  }

  clear(limit: Capacity | null): void {
    this.#limit = limit;
    this.#tokens = limit?.burst ?? 0;
    this.#refilledAt = this.now();
    this.#inFlight = 0;
    this.#log = [];
    this.#admitted = 0;
    this.#refused = 0;
    this.#seconds.length = 0;
  }

  /** A refusal after which a request would be admitted in `waitMs`; its Retry-After that rounded up. */
  #refuse(waitMs: number, reason: "rate" | "in-flight" | "quota"): Admission {
    this.#count().refused++;
    this.#refused++;
    const retryAfterSeconds =
      this.#limit?.retryAfterSeconds ?? Math.max(LEAST_RETRY_AFTER_S, Math.ceil(waitMs / 1000));
    return { admitted: false, retryAfterSeconds, waitMs, reason, status: this.#limit?.refuseWith ?? 429 };
  }

  /** The ms until a slot of every full quota window frees, or undefined when none is full. */
  #quota(limit: Capacity): number | undefined {
    const windows = limit.windows ?? [];
    if (windows.length === 0) return undefined;
    const now = this.now();
    const longest = Math.max(...windows.map((w) => w.seconds)) * 1000;
    while (this.#log.length > 0 && (this.#log[0] ?? now) <= now - longest) this.#log.shift();
    let wait: number | undefined;
    for (const w of windows) {
      const ms = w.seconds * 1000;
      // a fixed window began at the last whole multiple of its length; a sliding one `seconds` ago
      const from = w.fixed === true ? Math.floor(now / ms) * ms : now - ms;
      const inWindow = this.#log.filter((t) => (w.fixed === true ? t >= from : t > from));
      if (inWindow.length < w.limit) continue;
      const frees =
        w.fixed === true ? from + ms - now : (inWindow[inWindow.length - w.limit] ?? now) + ms - now;
      wait = Math.max(wait ?? 0, frees);
    }
    return wait;
  }

  #refill(): void {
    const now = this.now();
    const limit = this.#limit;
    if (limit !== null)
      this.#tokens = Math.min(
        limit.burst,
        this.#tokens + ((now - this.#refilledAt) / 1000) * limit.ratePerSec,
      );
    this.#refilledAt = now;
  }

  #count(): { second: number; admitted: number; refused: number } {
    const second = Math.floor(this.now() / 1000);
    const last = this.#seconds.at(-1);
    if (last !== undefined && last.second === second) return last;
    const entry = { second, admitted: 0, refused: 0 };
    this.#seconds.push(entry);
    if (this.#seconds.length > SECONDS_KEPT) this.#seconds.shift();
    return entry;
  }
}

export function parseCapacity(input: unknown): Capacity | null {
  const result = capacitySchema.nullable().safeParse(input);
  if (!result.success)
    throw new SimulatorOptionsError(
      `invalid capacity: ${result.error.issues.map((i) => i.message).join("; ")}`,
    );
  return result.data;
}
