import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import type { Answer } from "./answer.js";
import { retryReason, statusClass, type AttemptObservation } from "./attempt-labels.js";
import type { Submitter } from "./submitter.js";

/**
 * A submitter that times each request and tells `onAttempt` (metrics) how it went and how long it took;
 * the answer comes back with its `timing` (what the ledger's outbox exports of the attempt).
 */
export function observeAttempts(
  submitter: Submitter,
  onAttempt?: (attempt: AttemptObservation) => void,
  clock: () => number = performance.now.bind(performance),
  wallClock: () => number = Date.now,
): Submitter {
  return {
    submit: async (idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer> => {
      const startedAt = wallClock();
      const started = clock();
      const answer = await submitter.submit(idempotencyKey, body, trace);
      const elapsed = clock() - started;
      onAttempt?.({
        statusClass: statusClass(answer),
        retryReason: retryReason(answer),
        seconds: elapsed / 1000,
      });
      return { ...answer, timing: { startedAt, durationMs: Math.max(0, Math.round(elapsed)) } };
    },
    close: (abandon) => submitter.close(abandon),
  };
}
