import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import type { Answer } from "./answer.js";
import { firstHeaderValue } from "./extract.js";
import { parseRetryAfter } from "./retry-after.js";
import type { SendPacer, SendTicket } from "./send-pacer.js";
import type { Submitter } from "./submitter.js";

/**
 * A submitter that sends each request at a time booked in the fleet's budget, and tells the budget what
 * the service answered: a 429 cuts the learned rate (and its Retry-After holds the whole fleet), an
 * accepted request's latency says whether the service is queueing.
 */
export function withPacing(submitter: Submitter, pacer: SendPacer): Submitter {
  return {
    submit: async (idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer> => {
      const ticket = await pacer.acquire();
      let answer: Answer | undefined;
      try {
        answer = await submitter.submit(idempotencyKey, body, trace);
        return answer;
      } finally {
        tell(pacer, ticket, answer);
      }
    },
    close: () => submitter.close(),
  };
}

/** What the service's answer says of its capacity, given back with the request's ticket. */
function tell(pacer: SendPacer, ticket: SendTicket, answer: Answer | undefined): void {
  const status = answer?.kind === "response" ? answer.status : 0;
  // Only a 429 speaks of capacity. A 503 is an outage, which the cool-down answers: cutting the rate on
  // every 503 would collapse it against a service failing one request in five.
  if (answer?.kind === "response" && status === 429)
    pacer.onThrottled(
      ticket,
      status,
      parseRetryAfter(firstHeaderValue(answer.headers["retry-after"]), Date.now()),
    );
  else if (answer?.kind === "response" && status >= 200 && status < 300)
    pacer.onAccepted(ticket, answer.timing?.durationMs ?? Date.now() - ticket.sentAt);
  else pacer.onUnanswered(ticket);
}
