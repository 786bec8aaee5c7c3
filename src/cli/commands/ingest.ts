import { basename } from "node:path";
import { Command } from "commander";
import { claimGiven, FORCE_COPY_TEST_HOOK } from "../../ingest/claim-copy.js";
import { dropPass, ingestClaimed, type PassedFile } from "../../use-cases/drop-pass.js";
import { loadSourceProfiles } from "../../use-cases/source-profiles.js";
import { isDropName } from "../../ingest/drop-folder.js";
import { admitName, isRefused, leftFileText, type LeftFile } from "../../names/file-name.js";
import { SETTLE_WAITS } from "../../use-cases/nightly-pass.js";
import { escapedText, shownName } from "../../names/shown-text.js";
import { openContext, type AppContext } from "../context.js";
import { openTracing } from "../tracing.js";
import { openPastResults } from "../past-results.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { addCommonOptions, commandConfig, commandLogger, ingestWindow, overridesFrom } from "../runtime.js";
import type { WindowWait } from "../../ingest/ingest-window.js";
import { FlagError } from "../errors/flag-error.js";

export const ingestCommand: CommandFactory = () =>
  addCommonOptions(new Command("ingest"))
    .description(
      "Claim, validate and enqueue drop files (all ready ones, or the FILEs given); prints the batch ids.",
    )
    .argument("[files...]", "files to ingest instead of scanning the drop folder")
    .option("--drop-dir <dir>", "the drop folder (env DROP_DIR)")
    .option("--settle-ms <ms>", "a file must be unchanged this long to be picked up (env SETTLE_MS)")
    .action(async (files: string[], options: Record<string, unknown>) => {
      const config = commandConfig(overridesFrom(options));
      const logger = commandLogger(config, "invoice-relay-ingest");
      // A broken profiles file stops the command here, before any file is claimed.
      const profiles = await loadSourceProfiles(config, logger);
      const traced = await openTracing(logger);
      const past = await openPastResults(config, logger).catch(async (error: unknown) => {
        await traced?.shutdown();
        throw error;
      });
      const ctx = await openContext(config, { dropFolder: true, logger }).catch(async (error: unknown) => {
        await past.close();
        await traced?.shutdown();
        throw error;
      });
      // SIGTERM or Ctrl-C stops ingest between two chunks, a wait for room in the window too: the file
      // stays claimed and the next ingest or run resumes it. A second one exits at once (as safe).
      const stop = new AbortController();
      const stopOn = (signal: NodeJS.Signals): void => {
        if (stop.signal.aborted) process.exit(ExitCode.CouldNotFinish);
        stop.abort(signal);
      };
      process.on("SIGTERM", stopOn).on("SIGINT", stopOn);
      // Files seen and left where they are, each named with why: never exit 0.
      const left: LeftFile[] = [];
      try {
        const deps = {
          ...ctx,
          onLeft: (file: LeftFile) => left.push(file),
          logger,
          profiles,
          beyondRetention: past.beyondRetention(ctx.redis, config.queuePrefix),
          tracing: traced?.tracing,
          signal: stop.signal,
          window: ingestWindow(config, { until: stop.signal, onWait: sayWaiting }),
        };
        const waitUntil = Date.now() + SETTLE_WAITS * config.settleMs;
        const passed =
          files.length === 0
            ? await dropPass(deps, config.settleMs, { waitUntil })
            : await ingestGiven(ctx, deps, files);
        for (const { file, result } of passed) {
          const detail =
            result.kind === "ingested"
              ? `${result.counts.rows} rows, ${result.counts.valid} valid, ${result.enqueued} enqueued`
              : result.kind === "unreadable"
                ? `REJECTED: ${result.error.message}`
                : result.kind === "changed"
                  ? `CHANGED: ${result.error.message}`
                  : "being ingested by another process";
          process.stdout.write(`${file.batchId}\t${shownName(file.name)}\t${escapedText(detail)}\n`);
        }
        if (passed.length === 0) process.stderr.write(`no ready files in ${ctx.folder.root}\n`);
        for (const file of left)
          process.stderr.write(`invoice-relay ingest: ${escapedText(leftFileText(file))}\n`);
        process.exitCode = passed.some((p) => p.result.kind === "changed")
          ? ExitCode.CouldNotFinish
          : passed.some((p) => p.result.kind === "unreadable") || left.length > 0
            ? ExitCode.FinishedWithProblems
            : ExitCode.Ok;
      } finally {
        process.off("SIGTERM", stopOn).off("SIGINT", stopOn);
        await past.close();
        await ctx.close();
        await traced?.shutdown();
      }
    });

/**
 * `ingest` sends nothing itself: once the queue holds INGEST_WINDOW invoices not yet final, the rest of
 * the file waits for workers, and the person running it is told why it does not return.
 */
function sayWaiting(wait: WindowWait): void {
  process.stderr.write(
    `invoice-relay ingest: ${shownName(wait.file)}: the queue holds ${wait.unfinished} invoices not yet ` +
      `sent, as many as INGEST_WINDOW=${wait.window} allows; the rest of the file is enqueued as workers send ` +
      "them (`invoice-relay worker`, `start` or `run` on this Redis and QUEUE_PREFIX). Ctrl-C stops here " +
      "safely: the next `ingest` or `run` resumes the file. INGEST_WINDOW=0 enqueues whole files at once.\n",
  );
}

/**
 * Files named on the command line are claimed into processing/ like dropped ones; from another file
 * system, through a temporary copy, so a copy cut short is never taken for the whole file.
 */
async function ingestGiven(
  ctx: AppContext,
  deps: Parameters<typeof ingestClaimed>[0],
  files: readonly string[],
): Promise<PassedFile[]> {
  const passed: PassedFile[] = [];
  for (const path of files) {
    if (!isDropName(basename(path)))
      throw new FlagError(`${shownName(path)}: not a drop file (expected .csv, .json, .ndjson or .jsonl)`);
    const name = admitName(basename(path));
    if (isRefused(name)) throw new FlagError(`${shownName(path)}: its name ${name.why}`);
    const file = await claimGiven(ctx.folder, path, name, {
      forceCopy: process.env[FORCE_COPY_TEST_HOOK] === "1",
    });
    passed.push({ file, result: await ingestClaimed(deps, file) });
  }
  return passed;
}
