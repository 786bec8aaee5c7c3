import type { RatePhase } from "./send-rate-view.js";

/** What `status` and the console say of the fleet's sending: the figures of the send-rate view. */
export interface SendingFigures {
  readonly phase: RatePhase;
  readonly learnedPerSec: number;
  readonly fleetSentPerSec: number;
  /** Until when the service holds the fleet (Retry-After, epoch ms). */
  readonly heldUntil?: number | undefined;
  /** SUBMIT_CONCURRENCY is below what the rate needs at the service's latency. */
  readonly cappedByConcurrency?: boolean;
}

const perSec = (n: number): string => `${Math.round(n * 10) / 10}/s`;
const clockTime = (ms: number): string => `${new Date(ms).toISOString().slice(11, 19)} UTC`;

/**
 * The fleet's sending in an operator's words: how fast it went lately and what sets the pace (held by
 * the service, finding its speed, at it). Undefined while nothing is sent, nothing holds the fleet and no
 * limit was met: the rate then says nothing of the service.
 */
export function sendingInWords(s: SendingFigures): string | undefined {
  const lately = `${perSec(s.fleetSentPerSec)} sent lately (every process together)`;
  const capped =
    s.cappedByConcurrency === true
      ? "; SUBMIT_CONCURRENCY caps the requests in flight below what this rate needs: raise it"
      : "";
  if (s.heldUntil !== undefined)
    return `${lately}; held by the service until ${clockTime(s.heldUntil)} (Retry-After)${capped}`;
  switch (s.phase) {
    case "backing-off":
      return `${lately}, slowed to ${perSec(s.learnedPerSec)}: the service refuses for capacity${capped}`;
    case "holding":
      return `${lately}: at the service's speed, held at ${perSec(s.learnedPerSec)}${capped}`;
    case "probing":
      return s.fleetSentPerSec > 0 ? `${lately}; finding the service's speed${capped}` : undefined;
  }
}
