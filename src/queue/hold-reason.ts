import type { DeploymentView } from "./deployment-view.js";

/** What of the deployment's view can hold every invoice back, whatever its batch. */
export type HoldFacts = Pick<DeploymentView, "apiKeyRefusal" | "queue" | "coolDownMs" | "sendRate">;

/**
 * Why nothing is being sent, in words, when something holds the whole deployment back; undefined when
 * nothing does (invoices waiting then are only waiting their turn). The console says it beside every
 * batch that waits; `status` gives the same facts with what to do about them.
 */
export function submissionHeldBecause(facts: HoldFacts): string | undefined {
  const refusal = facts.apiKeyRefusal;
  if (refusal !== undefined)
    return (
      `the invoice service refused the API key (HTTP ${refusal.httpStatus}): nothing is sent until run, ` +
      "start or worker starts again with a key it accepts"
    );
  if (facts.queue.isPaused) return "the queue is paused: nothing is sent until it is resumed";
  if (facts.coolDownMs > 0)
    return `an outage cool-down holds every worker for another ${Math.ceil(facts.coolDownMs / 1000)} s`;
  if (facts.sendRate?.refusingForCapacity === true)
    return "the invoice service refuses every request for capacity (429); the invoices go as soon as it accepts again";
  return undefined;
}
