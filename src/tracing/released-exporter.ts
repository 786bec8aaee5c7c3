import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "../log/logger.js";

/** One warning per this long while the collector refuses or cannot be reached: a log, not a flood. */
const EXPORT_WARNING_EVERY_MS = 60_000;

/**
 * Wraps the exporter the batch span processor calls. It says, at most once a minute, that spans are not
 * reaching the collector (the relay's work goes on), and `release` answers every export still waiting
 * as failed: the processor then drops its own timer for it, which would otherwise hold an exiting
 * process for OTEL_BSP_EXPORT_TIMEOUT.
 */
export class ReleasedExporter implements SpanExporter {
  readonly #waiting = new Set<(result: ExportResult) => void>();
  #lastWarning = 0;
  #notDelivered = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    let answered = false;
    const answer = (result: ExportResult) => {
      if (answered) return;
      answered = true;
      this.#waiting.delete(answer);
      if (result.code !== ExportResultCode.SUCCESS) this.#warn(spans.length, result.error);
      done(result);
    };
    this.#waiting.add(answer);
    this.inner.export(spans, answer);
  }

  release(): void {
    for (const answer of [...this.#waiting]) answer({ code: ExportResultCode.FAILED });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  #warn(lost: number, error: Error | undefined): void {
    this.#notDelivered += lost;
    const now = Date.now();
    if (now - this.#lastWarning < EXPORT_WARNING_EVERY_MS) return;
    this.#lastWarning = now;
    this.logger.warn(
      { spansNotDelivered: this.#notDelivered, reason: (error?.message ?? "gave up").slice(0, 200) },
      "traces are not reaching the collector (OTEL_EXPORTER_OTLP_ENDPOINT); invoices are sent as usual",
    );
    this.#notDelivered = 0;
  }
}
