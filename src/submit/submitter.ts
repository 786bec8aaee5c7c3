import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import type { Answer } from "./answer.js";

/**
 * The one thing the worker needs from the service: send this body under this key, say what came back.
 * `trace`, with tracing on, is the attempt's: the request is a span of it and carries its traceparent.
 */
export interface Submitter {
  submit(idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer>;
  /** Waits for the requests in flight, or with `abandon` drops them (their invoices are sent again). */
  close(abandon?: boolean): Promise<void>;
}
