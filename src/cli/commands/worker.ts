import { once } from "node:events";
import { resolveHttpAddr } from "../../config/http-addr.js";
import { serveOps } from "../serve-ops.js";
import { onApiKeyRefused, startServiceAlerts } from "../alerts.js";
import { createRelayMetrics } from "../../ops/metrics/relay-metrics.js";
import { startSubmission } from "../../queue/submission-service.js";
import { openContext } from "../context.js";
import { startResultsExport } from "../results-export.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { commandScope, shutdownOnSignals, submitSettings, submittingCommand } from "../runtime.js";

export const workerCommand: CommandFactory = () =>
  submittingCommand("worker")
    .description(
      "Submission worker only; run several, on several machines, against one Redis to scale out. " +
        "Serves health probes (/healthz, /readyz) when HTTP_ADDR is set.",
    )
    .action(async (options: Record<string, unknown>) => {
      const { config, logger } = submitSettings(options, "invoice-relay-worker");
      // Connects and checks Redis as every command does, so a Redis to refuse is refused before any job is taken.
      await (await openContext(config, { logger })).close();
      await commandScope(logger, async (scope) => {
        // With RESULTS_DATABASE_URL: an old schema refuses the start; the outbox is on before any job is taken.
        const exported = await startResultsExport(config, logger);
        scope.defer(() => exported?.close());
        const stopping = shutdownOnSignals(logger, scope);
        // Before any job is taken: a port in use ends the command here.
        const metrics = createRelayMetrics();
        const probes = await serveOps(
          config,
          resolveHttpAddr(config.httpAddr, "off"),
          stopping,
          logger,
          metrics,
        );
        scope.defer(() => probes.close());
        const alerts = startServiceAlerts(config, logger);
        scope.defer(() => alerts.close());
        const service = await startSubmission(config, logger, {
          ...metrics.submission,
          onApiKeyRefused: onApiKeyRefused(config, alerts.notifier),
        });
        scope.defer(() => service.close(config.shutdownGraceMs));
        logger.info(
          { concurrency: config.submitConcurrency, prefix: config.queuePrefix },
          "submission worker started",
        );
        if (!stopping.aborted) await once(stopping, "abort");
      });
      logger.info("submission worker stopped");
      process.exitCode = ExitCode.Ok;
    });
