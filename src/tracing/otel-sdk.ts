import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { createOtlpNetworkExportDelegate, OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import {
  convertLegacyHttpOptions,
  createOtlpHttpExporterMetrics,
} from "@opentelemetry/otlp-exporter-base/node-http";
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from "@opentelemetry/otlp-transformer";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { Logger } from "../log/logger.js";
import { exportAgent, type ExportGate } from "./export-agent.js";
import type { TracingHandle } from "./invoice-tracing.js";
import { OtelInvoiceTracing } from "./otel-invoice-tracing.js";
import { OtlpTransport } from "./otlp-transport.js";
import { ReleasedExporter } from "./released-exporter.js";
import { TRACER_NAME } from "./span-names.js";
import type { TracingSettings } from "./tracing-settings.js";

/**
 * The OpenTelemetry SDK as the relay runs it, loaded (by a dynamic import) only when tracing is on: the
 * Node SDK's tracer provider with a batch span processor, and the OTLP/HTTP exporter the settings name,
 * both configured by the standard OTEL_* variables. No context manager, propagator or instrumentation is
 * registered, and nothing global is set: the relay's own spans are all it exports.
 */
export interface SdkOptions {
  /** The queue's name: the messaging destination of the spans. */
  readonly queue: string;
  readonly logger: Logger;
  /** Where spans go instead of OTLP (tests: the SDK's in-memory exporter). */
  readonly exporter?: SpanExporter | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * How long an exiting process waits for its last spans. A collector that answers takes a batch in
 * milliseconds; one that is down or stalled would hold the exit for its whole export timeout
 * (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s by default, retries included). Traces are a view of the work and the
 * ledger its record, so an exit is held no longer than a pause a person barely notices; then what is
 * unsent is dropped: no connection is opened, and every request and retry under way ends
 * (src/tracing/export-agent.ts, src/tracing/otlp-transport.ts, src/tracing/released-exporter.ts).
 */
const EXIT_FLUSH_MS = 1000;

export function openSdk(settings: TracingSettings, options: SdkOptions): TracingHandle {
  const env = options.env ?? process.env;
  const gate: ExportGate = { closed: false };
  const otlp =
    options.exporter === undefined
      ? otlpExporter(settings, env, gate)
      : { exporter: options.exporter, transport: undefined };
  const exporter = new ReleasedExporter(otlp.exporter, options.logger);
  const provider = new NodeTracerProvider({
    resource: defaultResource()
      .merge(
        resourceFromAttributes({
          "service.name": "invoice-relay",
          "service.instance.id": randomUUID(),
          "host.name": hostname(),
          "process.pid": process.pid,
        }),
      )
      // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win. Not the process detector: a command line
      // may carry a credential (--redis-url redis://user:password@…).
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracing = new OtelInvoiceTracing(provider.getTracer(TRACER_NAME), options.queue);
  let closing: Promise<void> | undefined;
  return {
    tracing,
    flush: () => provider.forceFlush(),
    shutdown: () => {
      closing ??= new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        // Past the bound, what is unsent is dropped: no new connection, no request or retry left waiting.
        const timer = setTimeout(() => {
          gate.closed = true;
          otlp.transport?.close();
          exporter.release();
          resolve();
        }, EXIT_FLUSH_MS);
        timer.unref();
        provider.shutdown().then(done, done);
      });
      return closing;
    },
  };
}

/** The OTLP/HTTP exporter, configured by the OTEL_EXPORTER_OTLP_* variables, and its transport. */
function otlpExporter(
  settings: TracingSettings,
  env: Readonly<Record<string, string | undefined>>,
  gate: ExportGate,
): { exporter: SpanExporter; transport: OtlpTransport } {
  const json = settings.protocol === "http/json";
  // The endpoint, headers, timeout and compression come from OTEL_EXPORTER_OTLP_* (read here).
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the one public reader of OTEL_EXPORTER_OTLP_*, as OpenTelemetry's own exporters still use
  const config = convertLegacyHttpOptions({}, "TRACES", "v1/traces", {
    "Content-Type": json ? "application/json" : "application/x-protobuf",
  });
  const transport = new OtlpTransport({
    url: config.url,
    headers: config.headers,
    compression: config.compression,
    agent: (protocol) => exportAgent(protocol, env, gate),
  });
  const metrics = createOtlpHttpExporterMetrics(
    "otlp_http_span_exporter",
    TraceExporterMetricsHelper,
    config.url,
    undefined,
  );
  const delegate = createOtlpNetworkExportDelegate(
    config,
    json ? JsonTraceSerializer : ProtobufTraceSerializer,
    metrics,
    transport,
  );
  return { exporter: new OTLPExporterBase(delegate), transport };
}
