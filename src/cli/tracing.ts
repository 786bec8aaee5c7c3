import type { Scope } from "../lifecycle/scope.js";
import type { Logger } from "../log/logger.js";
import { INVOICE_QUEUE } from "../queue/invoice-queue.js";
import type { InvoiceTracing, TracingHandle } from "../tracing/invoice-tracing.js";
import { startTracing } from "../tracing/start-tracing.js";

/** Starts this process's tracing when the OTEL_* variables ask for it (docs/operations.md, "Traces"). */
export function openTracing(logger: Logger): Promise<TracingHandle | undefined> {
  return startTracing(process.env, { queue: INVOICE_QUEUE, logger });
}

/**
 * Opens tracing into a command's scope, first, so it closes last: the spans of the work the scope's other
 * resources finish as they close are exported too.
 */
export async function openScopedTracing(scope: Scope, logger: Logger): Promise<InvoiceTracing | undefined> {
  const handle = await openTracing(logger);
  if (handle === undefined) return undefined;
  scope.defer(() => handle.shutdown());
  return handle.tracing;
}
