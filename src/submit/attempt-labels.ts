import type { Answer } from "./answer.js";

/** An attempt's answer by class, for metrics: `network` when no HTTP answer came back at all. */
export type StatusClass = "1xx" | "2xx" | "3xx" | "4xx" | "5xx" | "network";

/** Why an attempt is worth another one (src/submit/classify.ts retries exactly these). */
export type RetryReason = "throttled" | "server_error" | "timeout" | "network" | "in_flight" | "too_early";

/** What metrics keep of one attempt: never the idempotency key, the body or the service's words. */
export interface AttemptObservation {
  readonly statusClass: StatusClass;
  /** Undefined when the answer is not retried (a success, a refusal, a final 4xx). */
  readonly retryReason: RetryReason | undefined;
  /** From sending the request to the end of its answer (or to giving up on it). */
  readonly seconds: number;
}

const CLASSES: readonly StatusClass[] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

export function statusClass(answer: Answer): StatusClass {
  if (answer.kind === "no-response") return "network";
  return CLASSES[Math.floor(answer.status / 100) - 1] ?? "5xx";
}

/** The retryable answers of classify.ts by cause; undefined for every answer it does not retry. */
export function retryReason(answer: Answer): RetryReason | undefined {
  if (answer.kind === "no-response") return answer.reason === "timeout" ? "timeout" : "network";
  switch (answer.status) {
    case 429:
      return "throttled";
    case 503:
      // shedding load with a time to come back: "not now", as a 429 (classify.ts refusedForCapacity)
      return answer.headers["retry-after"] === undefined ? "server_error" : "throttled";
    case 500:
    case 502:
    case 504:
      return "server_error";
    case 408:
      return "timeout";
    case 409:
      return "in_flight";
    case 425:
      return "too_early";
    default:
      return undefined;
  }
}
