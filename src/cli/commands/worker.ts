import { once } from "node:events";
import { openContext } from "../context.js";
import { openServiceEdges } from "../service-edges.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { commandScope, submitSettings, submittingCommand } from "../runtime.js";

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
        const { stopping, startSubmission } = await openServiceEdges(config, logger, scope, "off");
        const service = await startSubmission();
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
