import { once } from "node:events";
import { Command } from "commander";
import { resolveHttpAddr, START_HTTP_ADDR } from "../../config/http-addr.js";
import { openContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { addCommonOptions, commandScope, commandSettings, shutdownOnSignals } from "../runtime.js";
import { serveOps } from "../serve-ops.js";

export const consoleCommand: CommandFactory = () =>
  addCommonOptions(new Command("console"))
    .description(
      "Serves the web console, /metrics and the health probes on HTTP_ADDR (default 127.0.0.1:9464) without " +
        "submitting anything, until SIGTERM/SIGINT. Needs no API key; its one write action, retry, needs CONSOLE_TOKEN.",
    )
    .option("--drop-dir <dir>", "the drop folder (env DROP_DIR)")
    .action(async (options: Record<string, unknown>) => {
      const { config, logger } = commandSettings(options, "invoice-relay-console");
      // Connects and checks Redis as every command does: a Redis to refuse is refused before serving.
      // It comes up even while the deployment refuses writing (its outbox on without
      // RESULTS_DATABASE_URL), so the operator can look: its pages say why, and its retry action is
      // refused with that reason for as long as it holds (checked at each request).
      await (await openContext(config, { logger, outbox: "reads" })).close();
      await commandScope(logger, async (scope) => {
        const stopping = shutdownOnSignals(logger, scope, config.shutdownGraceMs);
        const server = await serveOps(
          config,
          resolveHttpAddr(config.httpAddr, START_HTTP_ADDR),
          stopping,
          logger,
        );
        scope.defer(() => server.close());
        if (server.url !== undefined)
          process.stderr.write(
            `invoice-relay console: serving ${server.url}/ until Ctrl-C (SIGINT) or SIGTERM\n`,
          );
        if (!stopping.aborted) await once(stopping, "abort");
      });
      process.exitCode = ExitCode.Ok;
    });
