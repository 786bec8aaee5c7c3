import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import * as http from "node:http";
import * as https from "node:https";
import { Socket } from "node:net";
import { hostname } from "node:os";
import type { Duplex } from "node:stream";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { Logger } from "../log/logger.js";
import type { TracingHandle } from "./invoice-tracing.js";
import { OtelInvoiceTracing } from "./otel-invoice-tracing.js";
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
 * ledger its record, so an exit is held no longer than a pause a person barely notices.
 */
const EXIT_FLUSH_MS = 1000;
/** One warning per this long while the collector refuses or cannot be reached: a log, not a flood. */
const EXPORT_WARNING_EVERY_MS = 60_000;

export function openSdk(settings: TracingSettings, options: SdkOptions): TracingHandle {
  const env = options.env ?? process.env;
  const exporter = new WarningExporter(options.exporter ?? otlpExporter(settings, env), options.logger);
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
        const timer = setTimeout(resolve, EXIT_FLUSH_MS);
        timer.unref();
        provider.shutdown().then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          () => {
            clearTimeout(timer);
            resolve();
          },
        );
      });
      return closing;
    },
  };
}

function otlpExporter(
  settings: TracingSettings,
  env: Readonly<Record<string, string | undefined>>,
): SpanExporter {
  // The endpoint, headers, timeout and compression come from OTEL_EXPORTER_OTLP_* (read by the exporter).
  const config = { httpAgentOptions: (protocol: string) => exportAgent(protocol, env) };
  return settings.protocol === "http/json"
    ? new JsonTraceExporter(config)
    : new ProtobufTraceExporter(config);
}

/**
 * The exporter's HTTP agent, whose sockets never keep the process alive: a request to a collector that
 * does not answer would otherwise hold an exiting process for the whole export timeout. With https, the
 * standard certificate variables are read here (a custom agent replaces the exporter's own).
 */
async function exportAgent(
  protocol: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<http.Agent> {
  if (protocol === "http:") return new UnrefHttpAgent({ keepAlive: true });
  const file = (name: string) => {
    const path = env[`OTEL_EXPORTER_OTLP_TRACES_${name}`] ?? env[`OTEL_EXPORTER_OTLP_${name}`];
    return path === undefined || path.trim() === "" ? undefined : readFile(path.trim());
  };
  const [ca, cert, key] = await Promise.all([
    file("CERTIFICATE"),
    file("CLIENT_CERTIFICATE"),
    file("CLIENT_KEY"),
  ]);
  return new UnrefHttpsAgent({
    keepAlive: true,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  });
}

function unref(stream: Duplex | null | undefined): Duplex | null | undefined {
  if (stream instanceof Socket) stream.unref();
  return stream;
}

class UnrefHttpAgent extends http.Agent {
  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    return unref(super.createConnection(options, callback));
  }

  // Node refs a kept-alive socket again each time it is reused.
  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    super.reuseSocket(socket, request);
    unref(socket);
  }
}

class UnrefHttpsAgent extends https.Agent {
  override createConnection(
    options: https.RequestOptions,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    return unref(super.createConnection(options, callback));
  }

  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    super.reuseSocket(socket, request);
    unref(socket);
  }
}

/** Says, at most once a minute, that spans are not reaching the collector; the relay's work goes on. */
class WarningExporter implements SpanExporter {
  #lastWarning = 0;
  #failedSince = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.#warn(spans.length, result.error);
      done(result);
    });
  }

  #warn(lost: number, error: Error | undefined): void {
    this.#failedSince += lost;
    const now = Date.now();
    if (now - this.#lastWarning < EXPORT_WARNING_EVERY_MS) return;
    this.#lastWarning = now;
    this.logger.warn(
      { spansNotDelivered: this.#failedSince, reason: (error?.message ?? "unknown").slice(0, 200) },
      "traces are not reaching the collector (OTEL_EXPORTER_OTLP_ENDPOINT); invoices are sent as usual",
    );
    this.#failedSince = 0;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
