import { once } from "node:events";
import { Command } from "commander";
import { resolveHttpAddr } from "../../config/http-addr.js";
import { requireSubmitConfig } from "../../config/load.js";
import { startProbes } from "../../ops/probes.js";
import { startSubmission } from "../../queue/submission-service.js";
import { openContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import {
  addCommonOptions,
  addSubmitOptions,
  commandConfig,
  commandLogger,
  overridesFrom,
  shutdownOnSignals,
} from "../runtime.js";

export const workerCommand: CommandFactory = () =>
  addSubmitOptions(addCommonOptions(new Command("worker")))
    .description(
      "Submission worker only; run several, on several machines, against one Redis to scale out. " +
        "Serves health probes (/healthz, /readyz) when HTTP_ADDR is set.",
    )
    .action(async (options: Record<string, unknown>) => {
      const config = requireSubmitConfig(
        commandConfig(overridesFrom(options), ["invoiceApiUrl", "invoiceApiKey"]),
      );
      const logger = commandLogger(config, "invoice-relay-worker");
      // Connects and checks Redis as every command does, so a Redis to refuse is refused before any job is taken.
      await (await openContext(config, { logger })).close();
      const stopping = shutdownOnSignals(logger);
      // Before any job is taken: a port in use ends the command here.
      const probes = await startProbes(config, resolveHttpAddr(config.httpAddr, "off"), stopping, logger);
      try {
        const service = await startSubmission(config, logger);
        logger.info(
          { concurrency: config.submitConcurrency, prefix: config.queuePrefix },
          "submission worker started",
        );
        if (!stopping.aborted) await once(stopping, "abort");
        await service.close(config.shutdownGraceMs);
      } finally {
        await probes.close();
      }
      logger.info("submission worker stopped");
      process.exitCode = ExitCode.Ok;
    });
