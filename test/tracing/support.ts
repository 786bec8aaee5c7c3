import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { silentLogger } from "../../src/log/logger.js";
import { INVOICE_QUEUE } from "../../src/queue/invoice-queue.js";
import type { TracingHandle } from "../../src/tracing/invoice-tracing.js";
import { openSdk } from "../../src/tracing/otel-sdk.js";

/** One process's tracing as the relay runs it, exporting to the SDK's in-memory exporter. */
export interface ProcessTracing {
  readonly handle: TracingHandle;
  /** Every span this "process" ended, once its batch processor has exported them. */
  spans(): Promise<readonly ReadableSpan[]>;
}

export function inMemoryTracing(cleanups: (() => Promise<void>)[]): ProcessTracing {
  const exporter = new InMemorySpanExporter();
  const handle = openSdk(
    { protocol: "http/protobuf" },
    { queue: INVOICE_QUEUE, logger: silentLogger(), exporter },
  );
  cleanups.push(() => handle.shutdown());
  return {
    handle,
    spans: async () => {
      await handle.flush();
      return exporter.getFinishedSpans();
    },
  };
}

/** A span's traceparent, as the request it describes carried it. */
export function traceparentOf(span: ReadableSpan): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-0${traceFlags & 1}`;
}

/** Every text a span exports: its name, attribute values, its resource's, links' and events' attributes. */
export function exportedTexts(span: ReadableSpan): string[] {
  const values = (attributes: Record<string, unknown>) =>
    Object.entries(attributes).flatMap(([name, value]) => [name, JSON.stringify(value)]);
  return [
    span.name,
    span.status.message ?? "",
    ...values(span.attributes),
    ...values(span.resource.attributes),
    ...span.links.flatMap((link) => values(link.attributes ?? {})),
    ...span.events.flatMap((event) => [event.name, ...values(event.attributes ?? {})]),
  ];
}
