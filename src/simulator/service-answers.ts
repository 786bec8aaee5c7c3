/**
 * How the service says a refusal's wait and how long it takes to answer: pure rules the simulator serves
 * on the wire and the fleet model (src/dev/fleet-model/night.ts) serves on virtual time, the same ones.
 */

/** How a refusal for capacity says its wait (`capacity.retryAfterForm`). */
export type RetryAfterForm = "whole" | "none" | "zero" | "decimal" | "date";
export const RETRY_AFTER_FORMS = ["whole", "none", "zero", "decimal", "date"] as const;

/** HTTP dates have whole seconds: a date asks at least the wait, rounded up to the service's next second. */
const httpDate = (ms: number) => new Date(Math.ceil(ms / 1000) * 1000).toUTCString();

/**
 * A refusal's `Retry-After` (and `Date`, for a date) as the service says it, and when a client that obeys
 * it sends again: after what was said, or a second when nothing was (the relay's retry backoff, roughly).
 * `whole` is the refusal's whole seconds (at least 1, or the fixed figure); `decimal` the exact wait;
 * `date` an HTTP date on the service's clock, `clockSkewMs` off the true one.
 */
export function retryAfterOf(
  form: RetryAfterForm,
  clockSkewMs: number,
  refused: Readonly<{ retryAfterSeconds: number; waitMs: number }>,
  now: number,
): { headers: Record<string, string>; waitMs: number } {
  switch (form) {
    case "none":
      return { headers: {}, waitMs: 1000 };
    case "zero":
      return { headers: { "retry-after": "0" }, waitMs: 0 };
    case "decimal":
      return { headers: { "retry-after": (refused.waitMs / 1000).toFixed(3) }, waitMs: refused.waitMs };
    case "date": {
      const served = now + clockSkewMs;
      const headers = {
        "retry-after": httpDate(served + refused.waitMs),
        date: new Date(served).toUTCString(),
      };
      return { headers, waitMs: Math.ceil((served + refused.waitMs) / 1000) * 1000 - served };
    }
    case "whole":
      return {
        headers: { "retry-after": String(refused.retryAfterSeconds) },
        waitMs: refused.retryAfterSeconds * 1000,
      };
  }
}

/** Answers `factor` times as long from `atMs` to `untilMs` into the night (a partner's slow stretch). */
export interface LatencyJump {
  readonly atMs: number;
  readonly untilMs: number;
  readonly factor: number;
}

/** A long tail: this share of answers takes `TAIL_FACTOR` times as long (a p95 ten times the median). */
const TAIL_SHARE = 0.05;
const TAIL_FACTOR = 10;

/**
 * What an answer's drawn latency is multiplied by, `sinceMs` into the night: the jump while it lasts, and
 * the tail for one answer in twenty. `draw` is called once, and only with a tail, so that a seed's answers
 * without one are the ones they always were.
 */
export function latencyFactor(
  shape: Readonly<{ tail: boolean; jump: LatencyJump | null }>,
  sinceMs: number,
  draw: () => number,
): number {
  const { jump } = shape;
  const slower = jump !== null && sinceMs >= jump.atMs && sinceMs < jump.untilMs ? jump.factor : 1;
  return slower * (shape.tail && draw() < TAIL_SHARE ? TAIL_FACTOR : 1);
}
