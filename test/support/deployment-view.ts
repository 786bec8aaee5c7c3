import { ANSWER_CLASSES, FINAL_STATUSES, RETRY_CAUSES } from "../../src/ledger/fleet-counts.js";
import type { PassRecord } from "../../src/ledger/passes.js";
import type { DeploymentView } from "../../src/queue/deployment-view.js";
import type { SendRateView } from "../../src/queue/send-rate-view.js";

const zeros = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/**
 * A deployment's reading at `at` (Redis's clock) with `queued` invoices left, `waiting` jobs, the fleet
 * sending as `sendRate` says, and `passes` (newest first); everything else empty.
 */
export function fakeDeploymentView(options: {
  readonly at: number;
  readonly queued: number;
  readonly waiting: number;
  readonly sendRate: SendRateView | undefined;
  readonly passes?: readonly PassRecord[];
}): DeploymentView {
  return {
    census: {
      records: options.queued,
      byStatus: { queued: options.queued, retrying: 0, succeeded: 0, failed: 0, superseded: 0 },
      batches: 1,
      waitingByBatch: new Map(),
      oldestUnfinishedAt: undefined,
      at: options.at,
    },
    queue: {
      counts: { waiting: options.waiting, active: 0, delayed: 0, failed: 0, paused: 0 },
      isPaused: false,
    },
    coolDownMs: 0,
    apiKeyRefusal: undefined,
    oldestBatch: undefined,
    outbox: { on: false, backlog: { entries: 0, oldest: undefined }, refused: 0 },
    sendRate: options.sendRate,
    sftpSources: new Map(),
    passes: options.passes ?? [],
    lastPass: undefined,
    fleetTotals: {
      sent: 0,
      attempts: zeros(ANSWER_CLASSES),
      retries: zeros(RETRY_CAUSES),
      final: zeros(FINAL_STATUSES),
    },
  };
}

/** A fleet's send rate: 100/s learned, 40/s sent and accepted, probing; `over` changes any of it. */
export function fakeSendRate(over: Partial<SendRateView> = {}): SendRateView {
  return {
    learnedPerSec: 100,
    fleetSentPerSec: 40,
    fleetAcceptedPerSec: 40,
    phase: "probing",
    heldUntil: undefined,
    cappedByConcurrency: false,
    refusingSince: undefined,
    refusingForCapacity: false,
    plateauPerSec: undefined,
    cutAt: undefined,
    cuts: 0,
    cutsUnder: 0,
    answeredSinceCut: 0,
    refusedSinceCut: 0,
    ceilingPerSec: 0,
    ...over,
  };
}
