import {
  MIN_RATE,
  RECOVER_MS,
  parseRateState,
  phaseAt,
  rateAt,
  startState,
  type RatePhase,
  type RateSettings,
} from "../capacity/index.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { SendBudget } from "../ledger/send-budget.js";

export type { RatePhase, RateSettings } from "../capacity/index.js";

/** The fleet's sending rate as `status`, /metrics and the console show it. */
export interface SendRateView {
  /** The learned rate now, requests per second (within SUBMIT_RATE_PER_SEC). */
  readonly learnedPerSec: number;
  /** What every process together sent, and the service accepted, per second lately. */
  readonly fleetSentPerSec: number;
  readonly fleetAcceptedPerSec: number;
  readonly phase: RatePhase;
  /** Until when the service holds the fleet (its Retry-After, epoch ms), else undefined. */
  readonly heldUntil: number | undefined;
  /** True while a process finds SUBMIT_CONCURRENCY below what the rate needs at the latency seen. */
  readonly cappedByConcurrency: boolean;
  /**
   * Since when the service refuses for capacity and accepts nothing (epoch ms), while it still does: a
   * refusal within REFUSED_LATELY_MS, or the fleet held by its Retry-After; else undefined.
   */
  readonly refusingSince: number | undefined;
  /** True once it has refused everything for REFUSING_REPORTED_AFTER_MS: a quota spent, not a blip. */
  readonly refusingForCapacity: boolean;
  /** The plateau (the accepted rate at the last cut, the capacity as shown), else undefined. */
  readonly plateauPerSec: number | undefined;
  /** When the rate was last cut or held (epoch ms), while a plateau is known, else undefined. */
  readonly cutAt: number | undefined;
  /** The pass's cuts, and of them those that came before the rate was back at the plateau (rate.ts). */
  readonly cuts: number;
  readonly cutsUnder: number;
  /** The fleet's answers since the last cut or hold, and of them the refusals (429, 503 + Retry-After). */
  readonly answeredSinceCut: number;
  readonly refusedSinceCut: number;
  /** SUBMIT_RATE_PER_SEC: the rate's ceiling; 0: none. */
  readonly ceilingPerSec: number;
}

/** How long the service must refuse everything for capacity before it is reported as such. */
export const REFUSING_REPORTED_AFTER_MS = 60_000;
/**
 * A service that refuses everything still refuses "now" when the fleet heard a refusal within this long:
 * two of the longest gaps between the fleet's requests to it outside a hold (the rate's floor, MIN_RATE).
 * Longer, and nothing says it still refuses (the night ended, or no one sends).
 */
export const REFUSED_LATELY_MS = (2 * 1000) / MIN_RATE;

/** The settings the rate is computed with: the configured ceiling, start rate and longest hold. */
export function rateSettingsOf(config: {
  readonly submitRatePerSec: number;
  readonly submitRateStart: number;
  readonly retryAfterCapMs: number;
}): RateSettings {
  return {
    ceiling: config.submitRatePerSec,
    startRate: config.submitRateStart,
    retryAfterCapMs: config.retryAfterCapMs,
  };
}

/** Reads the fleet's send budget; undefined when no process has sent anything yet. */
export async function readSendRate(
  redis: RedisClient,
  prefix: string,
  settings: RateSettings,
): Promise<SendRateView | undefined> {
  const reply = await new SendBudget(redis, prefix).read();
  if (reply.state === "") return undefined;
  // a state no pacer could have written is shown as the start it is replaced with
  const fleet = reply;
  const state = parseRateState(reply.state, reply.now, reply.hold) ?? startState(settings, reply.now, reply);
  const refusingNow = reply.now - reply.refusedAt <= REFUSED_LATELY_MS || reply.hold > reply.now;
  const refusingSince = state.refusingSince === 0 || !refusingNow ? undefined : state.refusingSince;
  return {
    learnedPerSec: rateAt(state, reply.now, settings, fleet),
    fleetSentPerSec: reply.sentPerSec,
    fleetAcceptedPerSec: reply.acceptedPerSec,
    phase: phaseAt(state, reply.now, reply.hold),
    heldUntil: reply.hold > reply.now ? reply.hold : undefined,
    cappedByConcurrency: reply.capped > 0 && reply.now - reply.capped < RECOVER_MS,
    refusingSince,
    refusingForCapacity:
      refusingSince !== undefined && reply.now - refusingSince >= REFUSING_REPORTED_AFTER_MS,
    plateauPerSec: state.max > 0 ? state.max : undefined,
    cutAt: state.max > 0 ? state.at : undefined,
    cuts: state.cuts,
    cutsUnder: state.under,
    answeredSinceCut: Math.max(0, reply.accepted + reply.refused - state.atAccepted - state.atRefused),
    refusedSinceCut: Math.max(0, reply.refused - state.atRefused),
    ceilingPerSec: settings.ceiling,
  };
}
