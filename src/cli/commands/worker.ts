import { Command } from "commander";
import { requireSubmitConfig } from "../../config/load.js";
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
  shutdownSignal,
} from "../runtime.js";

export const workerCommand: CommandFactory = () =>
  addSubmitOptions(addCommonOptions(new Command("worker")))
    .description("Submission worker only; run several, on several machines, against one Redis to scale out.")
    .action(async (options: Record<string, unknown>) => {
      const config = requireSubmitConfig(
        commandConfig(overridesFrom(options), ["invoiceApiUrl", "invoiceApiKey"]),
      );
      const logger = commandLogger(config, "invoice-relay-worker");
      // Connects and checks Redis as every command does, so a Redis to refuse is refused before any job is taken.
      await (await openContext(config, { logger })).close();
      const service = await startSubmission(config, logger);
      logger.info(
        { concurrency: config.submitConcurrency, prefix: config.queuePrefix },
        "submission worker started",
      );
      await shutdownSignal(logger);
      await service.close(config.shutdownGraceMs);
      logger.info("submission worker stopped");
      process.exitCode = ExitCode.Ok;
    });
