import { once } from "node:events";
import { START_HTTP_ADDR } from "../../config/http-addr.js";
import { redisTarget } from "../../config/redis-target.js";
import { startScanService, type ScanService } from "../../use-cases/scan-service.js";
import { isScanSchedule } from "../../queue/scan-schedule.js";
import { FlagError } from "../errors/flag-error.js";
import { loadSourceProfiles } from "../../use-cases/source-profiles.js";
import { loadRemoteSources } from "../../ingest/sftp/load-remote-sources.js";
import { openRemotePass } from "../remote-sources.js";
import { createRedis, endConnection } from "../../queue/connection.js";
import { openContext } from "../context.js";
import { deploymentName } from "../deployment-name.js";
import { DropFolderGuard } from "../../use-cases/drop-folder-guard.js";
import { QuietWatch } from "../../ingest/drop-scan.js";
import { DropFolderOwnedError } from "../../ingest/errors/drop-folder-owned-error.js";
import { openPastResults } from "../past-results.js";
import { openServiceEdges } from "../service-edges.js";
import { ExitCode } from "../exit-codes.js";
import { passExitCode } from "../pass-exit-code.js";
import { startRateSampler } from "../../use-cases/rate-sampler.js";
import { rateSettingsOf } from "../../queue/send-rate-view.js";
import type { CommandFactory } from "../program.js";
import { commandScope, ingestWindow, submitSettings, submittingCommand } from "../runtime.js";

export const startCommand: CommandFactory = () =>
  submittingCommand("start")
    .description(
      "Long-running service: submission worker, ingest worker and a scheduled drop-folder scan (default nightly at 02:00). " +
        "SIGTERM/SIGINT: stop taking work, finish requests in flight within the grace period, exit 0. " +
        "Health probes (/healthz, /readyz) on HTTP_ADDR, default 127.0.0.1:9464.",
    )
    .option("--schedule <cron>", "when to scan the drop folder (cron, seconds field optional)", "0 2 * * *")
    .option("--tz <tz>", "time zone of the schedule, e.g. Europe/Berlin (default: the system's)")
    .option("--watch", "also pick files up as soon as they have settled")
    .option("--drop-dir <dir>", "the drop folder (env DROP_DIR)")
    .option("--settle-ms <ms>", "a file must be unchanged this long to be picked up (env SETTLE_MS)")
    .action(async (options: Record<string, unknown>) => {
      const { config, logger } = submitSettings(options, "invoice-relay-start");
      const tz = typeof options["tz"] === "string" ? options["tz"] : undefined;
      if (tz !== undefined && !isTimeZone(tz))
        throw new FlagError(`--tz "${tz}" is not a known time zone (e.g. Europe/Berlin, UTC)`);
      const cron = String(options["schedule"]);
      if (!isScanSchedule(cron, tz))
        throw new FlagError(
          `--schedule "${cron}" is not a cron schedule: use five fields (minute hour day month weekday, e.g. "0 2 * * *") ` +
            'or six with seconds first (e.g. "*/30 * * * * *")',
        );
      // A broken profiles file stops the start here; at a later scan it makes that scan claim nothing.
      const profiles = await loadSourceProfiles(config, logger);
      const sources = await loadRemoteSources(config);
      await commandScope(logger, async (scope) => {
        const past = await openPastResults(config, logger);
        scope.defer(() => past.close());
        // The drop folder is checked apart: one that cannot be used now keeps the service up and not
        // ready, each scan checking it again; one that is another deployment's refuses the start.
        const ctx = await openContext(config, { logger });
        scope.defer(() => ctx.close());
        const folder = new DropFolderGuard(ctx.folder, deploymentName(config), logger);
        const { stopping, metrics, startSubmission, tracing } = await openServiceEdges(
          config,
          logger,
          scope,
          START_HTTP_ADDR,
          () => folder.state(),
        );
        const problem = await folder.check();
        if (problem instanceof DropFolderOwnedError) throw problem;
        const scanConnection = createRedis(redisTarget(config), "worker", "invoice-relay-scan");
        scope.defer(() => {
          endConnection(scanConnection);
        });
        const submission = await startSubmission();
        // The learned rate noted in the series while the fleet sends: the passes' charts draw it.
        const watchDeps = { redis: ctx.redis, prefix: config.queuePrefix, logger };
        const sampler = startRateSampler({
          ...watchDeps,
          settings: rateSettingsOf(config),
          retentionMs: config.resultsRetention,
        });
        scope.defer(() => {
          sampler.stop();
        });
        // The scans and the submission stop together: the grace period runs from the signal.
        const started: { scans?: ScanService } = {};
        scope.defer(() =>
          Promise.all([
            started.scans?.close(config.shutdownGraceMs),
            submission.close(config.shutdownGraceMs),
          ]),
        );
        started.scans = await startScanService({
          deps: {
            ...ctx,
            logger,
            profiles,
            onIngested: metrics.ingest.onIngested,
            // A scan's wait for room ends with the process, so the scans close within the grace period.
            window: ingestWindow(config, { until: stopping }),
            beyondRetention: past.beyondRetention(ctx.redis, config.queuePrefix, stopping),
            tracing,
            // When each drop file was seen to change, from scan to scan (a file dated in the future).
            quiet: new QuietWatch(),
          },
          loadProfiles: () => loadSourceProfiles(config, logger),
          remote: openRemotePass(config, ctx, logger, sources),
          folderUsable: async () => (await folder.check()) === undefined,
          connection: scanConnection,
          prefix: config.queuePrefix,
          cron,
          tz,
          settleMs: config.settleMs,
          watch: options["watch"] === true,
          passes: {
            deps: { ...watchDeps, retentionMs: config.resultsRetention },
            // A file seen and left where it is: the scan did not do all there was, as for `run`.
            exitCodeOf: (batches, left) => {
              const code = passExitCode({ kind: "finished", batches, growing: [] });
              return left > 0 && code === ExitCode.Ok ? ExitCode.FinishedWithProblems : code;
            },
          },
        });
        logger.info(
          {
            schedule: cron,
            tz: tz ?? "system",
            watch: options["watch"] === true,
            dropDir: ctx.folder.root,
          },
          "invoice-relay started",
        );
        if (!stopping.aborted) await once(stopping, "abort");
      });
      logger.info("invoice-relay stopped");
      process.exitCode = ExitCode.Ok;
    });

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
