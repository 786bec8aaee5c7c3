import type { DeploymentView } from "../queue/deployment-view.js";
import { speedOf, type SpeedLimitName } from "../queue/speed-limit.js";

/** The fleet's sending rate (null before any process sent with the budget). */
export interface SendingStatus {
  readonly learned_per_sec: number;
  readonly fleet_sent_per_sec: number;
  readonly fleet_accepted_per_sec: number;
  readonly phase: "probing" | "holding" | "backing-off";
  /** Until when the service holds the fleet (Retry-After), or null. */
  readonly held_until: string | null;
  /** True while SUBMIT_CONCURRENCY is below what the learned rate needs at the service's latency. */
  readonly capped_by_concurrency: boolean;
  readonly refusing_since: string | null;
  readonly refusing_for_capacity: boolean;
}

/** What limits the night's speed, and when it ends (src/queue/speed-limit.ts). */
export interface SpeedStatus {
  readonly limit: SpeedLimitName;
  readonly since: string | null;
  readonly until: string | null;
  readonly words: string;
  readonly ends_at: string | null;
  readonly deadline: string | null;
  readonly end_words: string | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
const tenth = (n: number): number => Math.round(n * 10) / 10;

export function sendingStatus(view: DeploymentView): SendingStatus | null {
  const rate = view.sendRate;
  if (rate === undefined) return null;
  return {
    learned_per_sec: tenth(rate.learnedPerSec),
    fleet_sent_per_sec: tenth(rate.fleetSentPerSec),
    fleet_accepted_per_sec: tenth(rate.fleetAcceptedPerSec),
    phase: rate.phase,
    held_until: iso(rate.heldUntil),
    capped_by_concurrency: rate.cappedByConcurrency,
    refusing_since: iso(rate.refusingSince),
    refusing_for_capacity: rate.refusingForCapacity,
  };
}

export function speedStatus(view: DeploymentView): SpeedStatus {
  const speed = speedOf(view);
  return {
    limit: speed.limit,
    since: iso(speed.since),
    until: iso(speed.until),
    words: speed.words,
    ends_at: iso(speed.endsAt),
    deadline: iso(speed.deadline),
    end_words: speed.endWords ?? null,
  };
}
