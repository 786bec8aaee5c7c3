import { access } from "node:fs/promises";
import { Command } from "commander";
import { requireSubmitConfig } from "../../config/load.js";
import { dropPass } from "../../ingest/drop-pass.js";
import { BatchLostError } from "../../ingest/errors/batch-lost-error.js";
import { IngestInterruptedError } from "../../ingest/errors/ingest-interrupted-error.js";
import { isFinished, PassUpkeep } from "../../ingest/pass-upkeep.js";
import { isRedisUnavailable, safeUrl } from "../../queue/connection.js";
import { readKeyRefusal } from "../../queue/key-refusal.js";
import { startSubmission } from "../../queue/submission-service.js";
import type { BatchMeta } from "../../results/batch-store.js";
import { finalizeCompleteBatches } from "../../results/finalize.js";
import { openContext, type AppContext } from "../context.js";
import { parseDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { Progress } from "../progress.js";
import {
  addCommonOptions,
  addSubmitOptions,
  commandConfig,
  commandLogger,
  overridesFrom,
} from "../runtime.js";
import { hasProblems, summaryTable } from "../summary-table.js";

const POLL_MS = 250;

export const runCommand: CommandFactory = () =>
  addSubmitOptions(addCommonOptions(new Command("run")))
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
    .action(async (options: Record<string, unknown>) => {
      const deadlineText = typeof options["deadline"] === "string" ? options["deadline"] : undefined;
      const deadlineMs = deadlineText === undefined ? undefined : parseDuration(deadlineText);
      if (deadlineText !== undefined && deadlineMs === undefined) {
        throw new Error(`--deadline "${deadlineText}" is not a duration; use e.g. 90s, 45m or 2h`);
      }
      const config = requireSubmitConfig(
        commandConfig(overridesFrom(options), ["invoiceApiUrl", "invoiceApiKey"]),
      );
      const logger = commandLogger(config, "invoice-relay-run");
      const ctx = await openContext(config, { dropFolder: true });
      try {
        process.exitCode = await nightlyPass(
          ctx,
          logger,
          deadlineMs === undefined ? undefined : Date.now() + deadlineMs,
        );
      } finally {
        await ctx.close();
      }
    });

async function nightlyPass(
  ctx: AppContext,
  logger: ReturnType<typeof commandLogger>,
  deadline: number | undefined,
): Promise<number> {
  const config = requireSubmitConfig(ctx.config);
  let interrupted = false;
  const stop = new AbortController();
  const onSignal = () => {
    interrupted = true;
    stop.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const service = await startSubmission(config, logger);
  const progress = new Progress(process.stderr, logger);
  try {
    const deps = { ...ctx, logger, signal: stop.signal };
    let passed;
    try {
      passed = await dropPass(deps, config.settleMs);
    } catch (error) {
      if (!(error instanceof IngestInterruptedError)) throw error;
      process.stderr.write(`invoice-relay run: ${error.message}\n`);
      return ExitCode.CouldNotFinish;
    }
    const targets = new Set(passed.map((p) => p.file.batchId));
    for (const meta of await unfinishedBatches(ctx)) targets.add(meta.id);
    if (targets.size === 0) {
      process.stdout.write(`nothing to do: no ready files in ${ctx.folder.root} and no unfinished batches\n`);
      return ExitCode.Ok;
    }
    let metas: BatchMeta[] = [];
    let outageSince: number | undefined;
    const upkeep = new PassUpkeep(deps);
    for (;;) {
      try {
        await finalizeCompleteBatches(deps);
        metas = await upkeep.round(targets);
        if (metas.every(isFinished)) {
          progress.end();
          process.stdout.write(`${summaryTable(metas)}\n`);
          // A file that changed after its claim is not finished with, whatever its rows say.
          const changed = metas.filter((m) => m.state === "changed");
          for (const m of changed) process.stderr.write(`invoice-relay run: ${m.file_error ?? m.file}\n`);
          if (changed.length > 0) return ExitCode.CouldNotFinish;
          return hasProblems(metas) ? ExitCode.FinishedWithProblems : ExitCode.Ok;
        }
        const refusal = await readKeyRefusal(ctx.redis, config.queuePrefix);
        if (refusal !== undefined) {
          progress.end();
          process.stderr.write(
            `invoice-relay run: the invoice service refused the API key (HTTP ${refusal.httpStatus}: ${refusal.detail}). ` +
              "Submission is paused and nothing was marked failed; fix INVOICE_API_KEY and run again.\n",
          );
          return ExitCode.CouldNotFinish;
        }
        progress.update(await progressOf(ctx, metas));
        if (outageSince !== undefined) {
          logger.info(
            { downMs: Date.now() - outageSince },
            "Redis is back; waiting for the invoices goes on",
          );
          outageSince = undefined;
        }
      } catch (error) {
        if (error instanceof BatchLostError || error instanceof IngestInterruptedError) {
          progress.end();
          process.stderr.write(`invoice-relay run: ${error.message}\n`);
          return ExitCode.CouldNotFinish;
        }
        // A Redis restart or failover must not end a pass that may have hours to run: every step above
        // is safe to repeat, so wait for Redis (within the deadline) instead of giving up.
        if (!isRedisUnavailable(ctx.redis, error)) throw error;
        if (outageSince === undefined) {
          outageSince = Date.now();
          logger.warn(
            { redis: safeUrl(config.redisUrl) },
            "Redis is unreachable; waiting for it to come back",
          );
        }
      }
      if (interrupted || (deadline !== undefined && Date.now() > deadline)) {
        progress.end();
        const pending = metas.reduce((n, m) => n + Math.max(0, m.pending ?? 0), 0);
        process.stderr.write(
          `invoice-relay run: ${interrupted ? "interrupted" : "deadline passed"} with ${pending} invoice(s) not final yet` +
            `${outageSince === undefined ? "" : " (Redis unreachable)"}; they stay queued and the next run continues them.\n`,
        );
        return ExitCode.CouldNotFinish;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await service.close(config.shutdownGraceMs);
  }
}

/**
 * Batches from earlier runs still waiting on invoices, or whose file changed after its claim and is
 * still kept in processing/ (each run says so again), their files on this machine.
 */
async function unfinishedBatches(ctx: AppContext): Promise<BatchMeta[]> {
  const ids = await ctx.batches.list();
  const metas = await Promise.all(ids.map((id) => ctx.batches.get(id)));
  const open = metas.filter(
    (m): m is BatchMeta =>
      m !== undefined && (m.state === "ingested" || m.state === "ingesting" || m.state === "changed"),
  );
  const here = await Promise.all(
    open.map((m) =>
      access(m.path).then(
        () => true,
        () => false,
      ),
    ),
  );
  return open.filter((_, i) => here[i]);
}

async function progressOf(ctx: AppContext, metas: readonly BatchMeta[]) {
  const counts = await ctx.store.counts();
  return {
    files: metas.length,
    filesDone: metas.filter(isFinished).length,
    invoices: metas.reduce((n, m) => n + (m.valid_rows ?? 0), 0),
    pending: metas.reduce((n, m) => n + Math.max(0, m.pending ?? 0), 0),
    retrying: counts.retrying,
  };
}
