/**
 * The names spans and attributes use: OpenTelemetry's semantic conventions where one exists (messaging
 * spans for the queue, HTTP client spans for the POST; docs/operations.md, "Traces"), the relay's own
 * under `invoice_relay.` where none does. Pure.
 */
export const ATTR = {
  messagingSystem: "messaging.system",
  operationType: "messaging.operation.type",
  operationName: "messaging.operation.name",
  destination: "messaging.destination.name",
  messageId: "messaging.message.id",
  batchCount: "messaging.batch.message_count",
  method: "http.request.method",
  urlFull: "url.full",
  urlTemplate: "url.template",
  serverAddress: "server.address",
  serverPort: "server.port",
  statusCode: "http.response.status_code",
  resendCount: "http.request.resend_count",
  errorType: "error.type",
  batchId: "invoice_relay.batch_id",
  idempotencyKey: "invoice_relay.idempotency_key",
  line: "invoice_relay.line",
  attempt: "invoice_relay.attempt",
  correlationId: "invoice_relay.correlation_id",
  outcome: "invoice_relay.outcome",
} as const;

/** BullMQ is not among the conventions' well-known systems; its own name, as its instrumentations use. */
export const MESSAGING_SYSTEM = "bullmq";

/** The instrumentation scope of every span the relay makes. */
export const TRACER_NAME = "invoice-relay";
