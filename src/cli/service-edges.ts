import { resolveHttpAddr, type HttpAddrSetting } from "../config/http-addr.js";
import type { SubmitConfig } from "../config/load.js";
import type { Scope } from "../lifecycle/scope.js";
import type { Logger } from "../log/logger.js";
import { createRelayMetrics, type RelayMetrics } from "../ops/metrics/relay-metrics.js";
import { startSubmission, type SubmissionService } from "../queue/submission-service.js";
import { onApiKeyRefused, startServiceAlerts } from "./alerts.js";
import { startResultsExport } from "./results-export.js";
import { shutdownOnSignals } from "./runtime.js";
import { serveOps } from "./serve-ops.js";
import { openScopedTracing } from "./tracing.js";
import type { InvoiceTracing } from "../tracing/invoice-tracing.js";

/** What a long-running submitting command has open around its work. */
export interface ServiceEdges {
  /** Aborted by the first SIGTERM/SIGINT. */
  readonly stopping: AbortSignal;
  readonly metrics: RelayMetrics;
  /** Starts this process's submission worker, counted in `metrics` and alerting on a refused API key. */
  readonly startSubmission: () => Promise<SubmissionService>;
  /** This process's tracing (OTEL_* variables), when on. */
  readonly tracing: InvoiceTracing | undefined;
}

/**
 * Opens into `scope`, before `start` or `worker` takes any work: tracing (closed last), the results export (with
 * RESULTS_DATABASE_URL an old schema refuses the start, and the outbox is on before any work is taken;
 * closed last, after the submission's last events), the signal handlers, the ops server on HTTP_ADDR or
 * `httpAddrDefault` (a port in use ends the command here) and the webhook alerts.
 */
export async function openServiceEdges(
  config: SubmitConfig,
  logger: Logger,
  scope: Scope,
  httpAddrDefault: HttpAddrSetting,
  /** For a process that scans the drop folder: "ok", or why it cannot be used (a check of /readyz). */
  dropFolder?: () => string,
): Promise<ServiceEdges> {
  const tracing = await openScopedTracing(scope, logger);
  const exported = await startResultsExport(config, logger);
  scope.defer(() => exported?.close());
  const stopping = shutdownOnSignals(logger, scope, config.shutdownGraceMs);
  const metrics = createRelayMetrics();
  const probes = await serveOps(
    config,
    resolveHttpAddr(config.httpAddr, httpAddrDefault),
    stopping,
    logger,
    metrics,
    dropFolder,
  );
  scope.defer(() => probes.close());
  const alerts = startServiceAlerts(config, logger);
  scope.defer(() => alerts.close());
  return {
    stopping,
    metrics,
    tracing,
    startSubmission: () =>
      startSubmission(config, logger, {
        ...metrics.submission,
        onApiKeyRefused: onApiKeyRefused(config, alerts.notifier),
        tracing,
      }),
  };
}
