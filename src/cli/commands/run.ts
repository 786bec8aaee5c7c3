import { Command } from "commander";
import { resolveHttpAddr } from "../../config/http-addr.js";
import { requireSubmitConfig } from "../../config/load.js";
import { startProbes } from "../../ops/probes.js";
import { nightlyPass, type NightlyOutcome } from "../../use-cases/nightly-pass.js";
import { loadSourceProfiles } from "../../use-cases/source-profiles.js";
import { openContext } from "../context.js";
import { parseDuration } from "../../config/duration.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { Progress } from "../progress.js";
import {
  addCommonOptions,
  addSubmitOptions,
  commandConfig,
  commandLogger,
  overridesFrom,
  shutdownOnSignals,
} from "../runtime.js";
import { hasProblems, summaryTable } from "../summary-table.js";

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
      // A broken profiles file stops the run here, before Redis is touched or any file claimed.
      const profiles = await loadSourceProfiles(config, logger);
      const ctx = await openContext(config, { dropFolder: true });
      const progress = new Progress(process.stderr, logger);
      const stopping = shutdownOnSignals(logger);
      // Health probes only when HTTP_ADDR is set: a pass is not a service, but a scheduler may watch it.
      const probes = await startProbes(
        config,
        resolveHttpAddr(config.httpAddr, "off"),
        stopping,
        logger,
      ).catch(async (error: unknown) => {
        await ctx.close();
        throw error;
      });
      try {
        const outcome = await nightlyPass(
          { ...ctx, config, logger, profiles },
          {
            deadline: deadlineMs === undefined ? undefined : Date.now() + deadlineMs,
            signal: stopping,
            onProgress: (state) => {
              progress.update(state);
            },
          },
        );
        progress.end();
        process.exitCode = render(outcome, ctx.folder.root);
      } finally {
        await probes.close();
        await ctx.close();
      }
    });

/** Prints what the pass came to and returns the exit code. */
function render(outcome: NightlyOutcome, dropDir: string): number {
  const say = (line: string) => process.stderr.write(`invoice-relay run: ${line}\n`);
  switch (outcome.kind) {
    case "nothing-to-do":
      process.stdout.write(`nothing to do: no ready files in ${dropDir} and no unfinished batches\n`);
      return ExitCode.Ok;
    case "finished": {
      process.stdout.write(`${summaryTable(outcome.batches)}\n`);
      // A file that changed after its claim is not finished with, whatever its rows say.
      const changed = outcome.batches.filter((m) => m.state === "changed");
      for (const m of changed) say(m.file_error ?? m.file);
      if (changed.length > 0) return ExitCode.CouldNotFinish;
      return hasProblems(outcome.batches) ? ExitCode.FinishedWithProblems : ExitCode.Ok;
    }
    case "api-key-refused":
      say(
        `the invoice service refused the API key (HTTP ${outcome.httpStatus}: ${outcome.detail}). ` +
          "Submission is paused and nothing was marked failed; fix INVOICE_API_KEY and run again.",
      );
      return ExitCode.CouldNotFinish;
    case "stopped":
      say(
        `${outcome.why === "interrupted" ? "interrupted" : "deadline passed"} with ${outcome.pending} invoice(s) not final yet` +
          `${outcome.redisDown ? " (Redis unreachable)" : ""}; they stay queued and the next run continues them.`,
      );
      return ExitCode.CouldNotFinish;
    case "failed":
      say(outcome.error.message);
      return ExitCode.CouldNotFinish;
  }
}
