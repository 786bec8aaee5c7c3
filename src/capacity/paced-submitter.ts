import { refusedForCapacity } from "../submit/classify.js";
import { retryAfterOf } from "../submit/retry-after.js";
import type { Answer } from "../submit/answer.js";
import type { Submitter } from "../submit/submitter.js";
import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import type { SendPacer, SendTicket } from "./pacer.js";

/**
 * A submitter that sends each request at its send time in the fleet's budget and tells the pacer what
 * the service answered: a refusal for capacity (429, or 503 with Retry-After) with what it asked to wait,
 * or else an acceptance with its latency (a 422 or a 500 took the service's work as a 201 did); no answer
 * says nothing of capacity (AWS SDKs' adaptive mode measures its rate on every answer). `onSent`: the ticket.
 */
export function withPacing(inner: Submitter, pacer: SendPacer, onSent?: (t: SendTicket) => void): Submitter {
  return {
    submit: async (idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer> => {
      const ticket = await pacer.acquire();
      onSent?.(ticket);
      let answer: Answer | undefined;
      try {
        answer = await inner.submit(idempotencyKey, body, trace);
        return answer;
      } finally {
        tellPacer(pacer, ticket, answer);
      }
    },
    close: (abandon) => inner.close(abandon),
  };
}

/** What an answer says of capacity, told to the pacer; `now`: this process's clock (the fleet model's). */
export function tellPacer(
  pacer: SendPacer,
  ticket: SendTicket,
  answer: Answer | undefined,
  now = Date.now(),
): void {
  if (answer?.kind !== "response") return;
  const retryAfterMs = retryAfterOf(answer.headers, now);
  if (refusedForCapacity(answer.status, retryAfterMs)) pacer.onRefused(ticket, retryAfterMs ?? 0);
  else pacer.onAccepted(ticket, answer.timing?.durationMs ?? now - ticket.sentAt);
}
