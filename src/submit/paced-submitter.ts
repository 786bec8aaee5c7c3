import type { Answer } from "./answer.js";
import { firstHeaderValue } from "./extract.js";
import { parseRetryAfter } from "./retry-after.js";
import type { SendPacer } from "./send-pacer.js";
import type { Submitter } from "./submitter.js";

/**
 * A submitter that sends each request at a time booked in the fleet's budget, and tells the budget what
 * the service answered: a 429 cuts the learned rate (and its Retry-After holds the whole fleet), an
 * accepted request's latency says whether the service is queueing.
 */
export function withPacing(submitter: Submitter, pacer: SendPacer): Submitter {
  return {
    submit: async (idempotencyKey: string, body: string): Promise<Answer> => {
      await pacer.acquire();
      const sentAt = Date.now();
      const answer = await submitter.submit(idempotencyKey, body);
      if (answer.kind === "response") {
        const status = answer.status;
        // Only a 429 speaks of capacity. A 503 is an outage, which the cool-down answers: cutting the
        // rate on every 503 would collapse it against a service failing one request in five.
        if (status === 429)
          pacer.onThrottled(
            status,
            parseRetryAfter(firstHeaderValue(answer.headers["retry-after"]), Date.now()),
            sentAt,
          );
        else if (status >= 200 && status < 300)
          pacer.onAccepted(answer.timing?.durationMs ?? Date.now() - sentAt, sentAt);
      }
      return answer;
    },
    close: () => submitter.close(),
  };
}
