import type { AttemptTrace } from "../tracing/invoice-tracing.js";
import type { Answer } from "./answer.js";

/**
 * The one thing the worker needs from the service: send this body under this key, say what came back.
 * `trace`, with tracing on, is the attempt's: the request is a span of it and carries its traceparent.
 */
export interface Submitter {
  submit(idempotencyKey: string, body: string, trace?: AttemptTrace): Promise<Answer>;
  close(): Promise<void>;
}
