import { invoiceJson } from "../invoice/key.js";
import type { CanonicalInvoice } from "../invoice/schema.js";
import type { Ledger } from "../ledger/ledger.js";
import type { AttemptFacts } from "../ledger/record.js";
import { isFinal, type AnswerWritten, type KeyStatus } from "../ledger/statuses.js";
import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import { retryReason, statusClass } from "./attempt-labels.js";
import { classify, refusedForCapacity } from "./classify.js";
import type { ExtractionRules } from "./extract.js";
import type { Submitter } from "./submitter.js";

export interface SubmitDeps {
  readonly ledger: Ledger;
  readonly submitter: Submitter;
  readonly rules: ExtractionRules;
  readonly now: () => number;
}

export interface SubmitTask {
  readonly key: string;
  readonly invoice: CanonicalInvoice;
  /** 1-based attempt number of this try (stalled re-runs do not count). */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The attempt's trace, with tracing on: the POST is a span of it, and the ledger keeps its id. */
  readonly trace?: AttemptTrace | undefined;
}

export type SubmitOutcome =
  /** The ledger already has a final answer for this key: nothing is sent. */
  | { readonly kind: "skipped"; readonly status: KeyStatus }
  | {
      readonly kind: "succeeded";
      readonly transition: AnswerWritten;
      readonly correlationId: string | undefined;
    }
  | { readonly kind: "failed"; readonly detail: string }
  | {
      readonly kind: "retry";
      readonly detail: string;
      readonly httpStatus: number | undefined;
      readonly retryAfterMs: number | undefined;
    }
  /**
   * 429, or 503 with Retry-After (a service shedding load): the service said "not now". Recorded as an attempt (the key is `retrying`), but it spends none of
   * MAX_ATTEMPTS and never makes the key `failed`: the fleet slows down and sends it again.
   */
  | { readonly kind: "throttled"; readonly detail: string; readonly retryAfterMs: number | undefined }
  | { readonly kind: "api-key-refused"; readonly httpStatus: number; readonly detail: string };

/** The final status an outcome wrote to the ledger; undefined when it wrote none (a retry, an answer already there). */
export function finalStatusWritten(outcome: SubmitOutcome): "succeeded" | "failed" | undefined {
  if (outcome.kind === "succeeded") return outcome.transition === "ok" ? "succeeded" : undefined;
  if (outcome.kind === "failed") return "failed";
  return undefined;
}

/**
 * One attempt for one invoice: check the ledger, send, classify, record. The ledger is read first so a
 * key that already succeeded is never sent again; every attempt carries the same key and body bytes.
 */
export async function submitInvoice(deps: SubmitDeps, task: SubmitTask): Promise<SubmitOutcome> {
  const current = await deps.ledger.statusOf(task.key);
  if (isFinal(current) && current !== undefined) return { kind: "skipped", status: current };

  const document = invoiceJson(task.invoice);
  const sentAt = deps.now();
  const answer = await deps.submitter.submit(task.key, document, task.trace);
  const answeredAt = deps.now();
  const verdict = classify(answer, deps.rules, answeredAt);
  // Timed where the request is sent (observeAttempts); else around the call here.
  const timing = answer.timing ?? { startedAt: sentAt, durationMs: answeredAt - sentAt };
  const attempt: AttemptFacts = {
    number: task.attempt,
    startedAt: timing.startedAt,
    durationMs: timing.durationMs,
    httpStatus: verdict.httpStatus,
    networkError: verdict.kind === "retry" ? verdict.networkError : undefined,
    correlationId: verdict.correlationId,
    retryAfterMs: verdict.kind === "retry" ? verdict.retryAfterMs : undefined,
    // counted in the fleet's totals by the write that records the answer, whatever that write decides
    counted: {
      answerClass: statusClass(answer),
      retry: retryReason(answer),
      keyRefusedBefore: answer.keyRefusedBefore,
    },
  };
  task.trace?.answered({ correlationId: verdict.correlationId });
  const traceId = task.trace?.traceId;
  switch (verdict.kind) {
    case "succeeded": {
      const transition = await deps.ledger.recordSucceeded(task.key, {
        attempt,
        httpStatus: verdict.httpStatus,
        correlationId: verdict.correlationId,
        rulesetVersion: verdict.rulesetVersion,
        responseBody: verdict.body,
        traceId,
      });
      return { kind: "succeeded", transition, correlationId: verdict.correlationId };
    }
    case "failed":
      await deps.ledger.recordFailed(task.key, {
        attempt,
        httpStatus: verdict.httpStatus,
        correlationId: verdict.correlationId,
        error: verdict.detail,
        document,
        traceId,
      });
      return { kind: "failed", detail: verdict.detail };
    case "api-key-refused":
      await deps.ledger.recordRefusedAttempt(task.key, attempt);
      return { kind: "api-key-refused", httpStatus: verdict.httpStatus, detail: verdict.detail };
    case "retry": {
      if (refusedForCapacity(verdict.httpStatus, verdict.retryAfterMs)) {
        await deps.ledger.recordRetrying(task.key, {
          attempt,
          httpStatus: verdict.httpStatus,
          error: verdict.detail,
          traceId,
        });
        return { kind: "throttled", detail: verdict.detail, retryAfterMs: verdict.retryAfterMs };
      }
      if (task.attempt >= task.maxAttempts) {
        const detail = `gave up after ${task.attempt} attempt(s); last: ${verdict.detail}`;
        await deps.ledger.recordFailed(task.key, {
          attempt,
          httpStatus: verdict.httpStatus,
          error: detail,
          document,
          traceId,
        });
        return { kind: "failed", detail };
      }
      await deps.ledger.recordRetrying(task.key, {
        attempt,
        httpStatus: verdict.httpStatus,
        error: verdict.detail,
        traceId,
      });
      return {
        kind: "retry",
        detail: verdict.detail,
        httpStatus: verdict.httpStatus,
        retryAfterMs: verdict.retryAfterMs,
      };
    }
  }
}
