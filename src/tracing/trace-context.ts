import { z } from "zod";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), the form in which an invoice's trace travels
 * in its job's data and in the `traceparent` header of every POST. Pure.
 */

/** `00-<trace id>-<parent span id>-<flags>`: version 00, lower-case hex, neither id all zeros. */
const TRACEPARENT = /^00-(?!0{32}-)([0-9a-f]{32})-(?!0{16}-)([0-9a-f]{16})-([0-9a-f]{2})$/;

export const traceparentSchema = z
  .string()
  .regex(TRACEPARENT, "must be a W3C traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>");

/** A trace id as the ledger and the results of record keep it: 32 lower-case hex digits, not all zeros. */
export const traceIdSchema = z.string().regex(/^(?!0{32}$)[0-9a-f]{32}$/, "must be 32 lower-case hex digits");

/** The sampled bit of the trace flags: the trace is recorded and exported. */
const SAMPLED = 0x01;

export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
}

/** The parts of a traceparent, or undefined when it is not one. */
export function parseTraceparent(text: string): TraceParent | undefined {
  const match = TRACEPARENT.exec(text);
  if (match === null) return undefined;
  const [, traceId = "", spanId = "", flags = "00"] = match;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & SAMPLED) === SAMPLED };
}

/** The traceparent that names this span as the parent; only the sampled flag is carried. */
export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${parent.sampled ? "01" : "00"}`;
}
