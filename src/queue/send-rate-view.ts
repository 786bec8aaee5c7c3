import type { RedisClient } from "../ledger/redis-client.js";
import { SendBudget } from "../ledger/send-budget.js";
import {
  DEFAULT_RATE_SETTINGS,
  initialRateState,
  phaseAt,
  rateAt,
  type RatePhase,
  type RateSettings,
} from "../submit/send-rate.js";
import { parseRateState } from "../submit/rate-state.js";

export type { RatePhase, RateSettings } from "../submit/send-rate.js";

/** The fleet's sending rate as `status`, /metrics and the console show it. */
export interface SendRateView {
  /** The learned rate now, requests per second (within SUBMIT_RATE_PER_SEC). */
  readonly learnedPerSec: number;
  /** What every process together sent per second lately. */
  readonly fleetSentPerSec: number;
  readonly phase: RatePhase;
  /** Since when the service refuses for capacity and accepts nothing (epoch ms), else undefined. */
  readonly refusingSince: number | undefined;
  /** True once it has refused everything for REFUSING_REPORTED_AFTER_MS: a quota spent, not a blip. */
  readonly refusingForCapacity: boolean;
}

/** How long the service must refuse everything for capacity before it is reported as such. */
export const REFUSING_REPORTED_AFTER_MS = 60_000;

/** The settings the view computes with: the configured ceiling and starting rate. */
export function rateSettingsOf(config: {
  readonly submitRatePerSec: number;
  readonly submitRateStart: number;
}): RateSettings {
  return { ...DEFAULT_RATE_SETTINGS, ceiling: config.submitRatePerSec, startRate: config.submitRateStart };
}

/** Reads the fleet's send budget; undefined when no process has sent anything yet. */
export async function readSendRate(
  redis: RedisClient,
  prefix: string,
  settings: RateSettings,
): Promise<SendRateView | undefined> {
  const reply = await new SendBudget(redis, prefix).read();
  if (reply.state === "") return undefined;
  const state = parseRateState(reply.state) ?? initialRateState(settings, reply.now);
  const refusingSince = state.refusingSince === 0 ? undefined : state.refusingSince;
  return {
    learnedPerSec: rateAt(state, reply.now, settings, reply.sentPerSec),
    fleetSentPerSec: reply.sentPerSec,
    phase: phaseAt(state, reply.now, reply.heldUntil, settings),
    refusingSince,
    refusingForCapacity:
      refusingSince !== undefined && reply.now - refusingSince >= REFUSING_REPORTED_AFTER_MS,
  };
}
