/**
 * Names the relay's spans use besides OpenTelemetry's semantic conventions (messaging spans for the
 * queue, HTTP client spans for the POST; docs/operations.md, "Traces"), whose attribute names are
 * written where each span is made. The relay's own attributes are under `invoice_relay.`. Pure.
 */

/** BullMQ is not among the conventions' well-known systems; its own name, as its instrumentations use. */
export const MESSAGING_SYSTEM = "bullmq";

/** The instrumentation scope of every span the relay makes. */
export const TRACER_NAME = "invoice-relay";
