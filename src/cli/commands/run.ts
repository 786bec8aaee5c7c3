import { once } from "node:events";
import type { Logger } from "../../log/logger.js";
import type { SubmitConfig } from "../../config/load.js";
import { apiKeySetting } from "../../config/api-key-setting.js";
import { resolveHttpAddr, START_HTTP_ADDR } from "../../config/http-addr.js";
import { serveOps } from "../serve-ops.js";
import { createRelayMetrics } from "../../ops/metrics/relay-metrics.js";
import { PassWatch } from "../../use-cases/pass-watch.js";
import { startRateSampler } from "../../use-cases/rate-sampler.js";
import { rateSettingsOf } from "../../queue/send-rate-view.js";
import type { BatchMeta } from "../../ledger/batch-store.js";
import { nightlyPass, type NightlyOutcome } from "../../use-cases/nightly-pass.js";
import { loadSourceProfiles } from "../../use-cases/source-profiles.js";
import { loadRemoteSources } from "../../ingest/sftp/load-remote-sources.js";
import { openRemotePass } from "../remote-sources.js";
import { openContext } from "../context.js";
import { openPastResults } from "../past-results.js";
import { startResultsExport, type ResultsExport } from "../results-export.js";
import { parseDuration } from "../../config/duration.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { Progress } from "../progress.js";
import {
  commandScope,
  ingestWindow,
  shutdownOnSignals,
  submitSettings,
  submittingCommand,
} from "../runtime.js";
import { summaryTable } from "../summary-table.js";
import { watchNightSpeed } from "../night-speed.js";
import { leftExitCode, remoteExitCode, renderOutcome } from "../run-outcome.js";
import { readDeployment } from "../../queue/deployment-view.js";
import { ALERT_DRAIN_MS, createNotifier, notifyPassOutcome, onApiKeyRefused } from "../alerts.js";
import { FlagError } from "../errors/flag-error.js";
import { openScopedTracing } from "../tracing.js";
import { CLOSING_BOUND_MS, hardStopAfter, unanswered } from "../hard-stop.js";
import { passSignal } from "../../lifecycle/pass-signal.js";
import type { RedisClient } from "../../ledger/redis-client.js";
import { describeTarget, redisTarget } from "../../config/redis-target.js";
import type { LeftFile } from "../../names/file-name.js";

export const runCommand: CommandFactory = () =>
  submittingCommand("run")
    .description(
      "One nightly pass: claim every ready file, ingest, submit, wait until every invoice is final, write reports, exit. " +
        "Exit 0: all succeeded or duplicate; 2: some rejected, failed or in conflict; 1: could not finish.",
    )
    .option("--drop-dir <dir>", "the drop folder (env DROP_DIR)")
    .option("--settle-ms <ms>", "a file must be unchanged this long to be picked up (env SETTLE_MS)")
    .option(
      "--deadline <duration>",
      "give up waiting after this long, e.g. 45m or 2h (work left continues next run)",
    )
    .option(
      "--serve",
      "after the pass, keep serving HTTP_ADDR (default 127.0.0.1:9464 with --serve) until SIGTERM/SIGINT; the exit code is the pass's",
    )
    .action(async (options: Record<string, unknown>) => {
      const deadlineText = typeof options["deadline"] === "string" ? options["deadline"] : undefined;
      const deadlineMs = deadlineText === undefined ? undefined : parseDuration(deadlineText);
      if (deadlineText !== undefined && deadlineMs === undefined) {
        throw new FlagError(`--deadline "${deadlineText}" is not a duration; use e.g. 90s, 45m or 2h`);
      }
      const { config, logger } = submitSettings(options, "invoice-relay-run");
      // A broken profiles file stops the run here, before Redis is touched or any file claimed.
      const profiles = await loadSourceProfiles(config, logger);
      const sources = await loadRemoteSources(config);
      // The deadline counts from the process's start (performance.timeOrigin), as the scheduler that
      // started it counts: loading, settings, profiles and every connection at start are inside it.
      const deadline = deadlineMs === undefined ? undefined : Math.floor(performance.timeOrigin) + deadlineMs;
      // Whatever does not answer, the run ends by its deadline, its grace and its closing, naming it.
      const bound =
        deadlineMs === undefined ? undefined : deadlineMs + config.shutdownGraceMs + CLOSING_BOUND_MS;
      const redis: { client?: RedisClient } = {};
      const hardStop =
        bound === undefined
          ? undefined
          : hardStopAfter(
              bound - performance.now(),
              `invoice-relay run: still not done ${Math.round(bound / 1000)} s after it started (its --deadline, grace and closing)`,
              process.stderr,
              () => unanswered(redis.client, describeTarget(redisTarget(config))),
            );
      try {
        await runPass(config, logger, profiles, sources, options, deadline, () => hardStop?.(), redis);
      } finally {
        hardStop?.();
      }
    });

async function runPass(
  config: SubmitConfig,
  logger: Logger,
  profiles: Awaited<ReturnType<typeof loadSourceProfiles>>,
  sources: Awaited<ReturnType<typeof loadRemoteSources>>,
  options: Record<string, unknown>,
  /** When the pass gives up waiting (epoch ms): the process's start plus --deadline. */
  deadline: number | undefined,
  /** The pass is over (with --serve, serving goes on until a signal): its hard stop no longer applies. */
  passDone: () => void,
  /** Given the pass's Redis connection, for the hard stop to tell whether it answers. */
  redis: { client?: RedisClient },
): Promise<void> {
  await commandScope(logger, async (scope) => {
    const tracing = await openScopedTracing(scope, logger);
    // One deadline for the pass, its record and the export of its results: PostgreSQL's check at
    // start ends with it too.
    const past = await openPastResults(config, logger, passSignal(new AbortController().signal, deadline));
    scope.defer(() => past.close());
    const ctx = await openContext(config, { dropFolder: true });
    scope.defer(() => ctx.close());
    redis.client = ctx.redis;
    // With RESULTS_DATABASE_URL: an old schema refuses the run; the outbox is on before any file is claimed.
    const exported = await startResultsExport(config, logger);
    scope.defer(() => exported?.close());
    const progress = new Progress(process.stderr, logger);
    const notifier = createNotifier(config, logger);
    const stopping = shutdownOnSignals(logger, scope, config.shutdownGraceMs);
    const serve = options["serve"] === true;
    const metrics = createRelayMetrics();
    // Served only when HTTP_ADDR is set or --serve asks: a pass is not a service, but a scheduler may watch it.
    const probes = await serveOps(
      config,
      resolveHttpAddr(config.httpAddr, serve ? START_HTTP_ADDR : "off"),
      stopping,
      logger,
      metrics,
    );
    scope.defer(() => probes.close());
    // The pass's record (console, status, /metrics) and the learned rate noted while it runs.
    const watch = { redis: ctx.redis, prefix: config.queuePrefix, logger };
    const pass = PassWatch.starting(
      { ...watch, retentionMs: config.resultsRetention },
      "run",
      undefined,
      deadline,
    );
    let waitedFor: readonly BatchMeta[] = [];
    await pass.open();
    // Files the pass sees and leaves where they are: named at the end and in its record, never exit 0.
    const left: LeftFile[] = [];
    const onLeft = (file: LeftFile) => left.push(file);
    // A pass cut short by an error is recorded as one that could not finish.
    let ended = false;
    scope.defer(async () => {
      if (ended) return;
      pass.noteLeft(left);
      await pass.end(waitedFor, ExitCode.CouldNotFinish);
    });
    // The night's speed limit, read from the fleet's figures as `status` reads it, said at the end.
    const speed = await watchNightSpeed(() =>
      readDeployment(ctx.redis, ctx.queue, config).catch(() => undefined),
    );
    scope.defer(() => {
      speed.stop();
    });
    const sampler = startRateSampler({
      ...watch,
      settings: rateSettingsOf(config),
      retentionMs: config.resultsRetention,
    });
    scope.defer(() => {
      sampler.stop();
    });

    const remote = openRemotePass(config, ctx, logger, sources, onLeft);
    const outcome = await nightlyPass(
      {
        ...ctx,
        config,
        logger,
        profiles,
        submissionHooks: {
          ...metrics.submission,
          onApiKeyRefused: onApiKeyRefused(config, notifier),
        },
        onIngested: metrics.ingest.onIngested,
        window: ingestWindow(config),
        // Its look-ups end with the pass's one signal (nightlyPass gives it).
        beyondRetention: past.beyondRetention(ctx.redis, config.queuePrefix),
        remote,
        tracing,
        onLeft,
      },
      {
        deadline,
        signal: stopping,
        onProgress: (state) => {
          progress.update(state);
        },
        onBatches: (batches) => {
          waitedFor = batches;
          pass.note(batches.map((b) => b.id));
        },
      },
    );
    progress.end();
    for (const line of await speed.end()) process.stderr.write(`invoice-relay run: ${line}\n`);
    const exportedUntil = await waitForExport(exported, outcome, deadline, stopping);
    const exitCode = remoteExitCode(
      remote?.failures(),
      leftExitCode(left, exportedUntil ?? renderOutcome(outcome, ctx.folder.root, apiKeySetting(config))),
    );
    process.exitCode = exitCode;
    sampler.stop();
    ended = true;
    pass.noteLeft(left);
    await pass.end(outcome.kind === "finished" ? outcome.batches : waitedFor, exitCode);
    // An alert that cannot be delivered is logged; it never changes the exit code.
    await notifyPassOutcome({ ...ctx, config, logger, profiles, notifier }, outcome, exitCode);
    await notifier.drain(ALERT_DRAIN_MS);
    if (serve && probes.url !== undefined && !stopping.aborted) {
      process.stderr.write(`invoice-relay run: serving ${probes.url}/ until Ctrl-C (SIGINT) or SIGTERM\n`);
      passDone();
      await once(stopping, "abort");
    }
  });
}

/**
 * With the export on, a pass (even one with nothing to do) is complete only once the outbox holds no
 * event written before its end, left by it or by an earlier process: waits for that (until the run's
 * --deadline). Undefined when so (or not needed), else the exit code, having said why.
 */
async function waitForExport(
  exported: ResultsExport | undefined,
  outcome: NightlyOutcome,
  deadline: number | undefined,
  stopping: AbortSignal,
): Promise<number | undefined> {
  if (exported === undefined || (outcome.kind !== "finished" && outcome.kind !== "nothing-to-do"))
    return undefined;
  const cutoff = await exported.redisNow();
  const until = deadline === undefined ? { signal: stopping } : { deadline, signal: stopping };
  if (await exported.waitExported(cutoff, until)) return undefined;
  if (outcome.kind === "finished") process.stdout.write(`${summaryTable(outcome.batches)}\n`);
  process.stderr.write(
    `invoice-relay run: ${stopping.aborted ? "interrupted" : "deadline passed"} before the results were exported: ` +
      "they are not yet in PostgreSQL (RESULTS_DATABASE_URL); they wait in the outbox in Redis and the next " +
      "`invoice-relay run`, `start` or `worker` exports them\n",
  );
  return ExitCode.CouldNotFinish;
}
