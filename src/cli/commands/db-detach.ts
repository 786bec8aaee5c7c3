import { createInterface } from "node:readline/promises";
import { Command } from "commander";
import { detachOutbox, outboxToDetach } from "../../ledger/outbox-detach.js";
import { openContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { addCommonOptions, commandConfig, overridesFrom } from "../runtime.js";
import { FlagError } from "../errors/flag-error.js";

/**
 * `db detach`: the way from Redis + PostgreSQL back to Redis only. Turns the deployment's outbox off and
 * drops the events not exported yet, after saying how many and confirming (a terminal, or --yes).
 */
export function dbDetachCommand(): Command {
  return addCommonOptions(new Command("detach"))
    .description(
      "Go on with Redis only: turn the outbox to PostgreSQL off and drop the events not exported yet " +
        "(the results of record will miss them), after confirmation. Run it without RESULTS_DATABASE_URL, " +
        "with the processes started with it stopped. Exit 0 when the outbox is off, 1 when not confirmed.",
    )
    .option("--yes", "drop the events without asking (scripts, CI)")
    .action(async (options: Record<string, unknown>) => {
      const config = commandConfig(overridesFrom(options));
      if (config.resultsDatabaseUrl !== undefined)
        throw new FlagError(
          "RESULTS_DATABASE_URL is set: `db detach` is for going on without PostgreSQL, and the next `run`, " +
            "`start` or `worker` with it would turn the outbox on again. Unset RESULTS_DATABASE_URL (in the " +
            "environment and any .env file) and run `invoice-relay db detach` again.",
        );
      const ctx = await openContext(config, { outbox: "detaches" });
      try {
        const prefix = config.queuePrefix;
        const { on, backlog } = await outboxToDetach(ctx.redis, prefix);
        if (!on && backlog.entries === 0) {
          process.stdout.write(`the outbox of QUEUE_PREFIX=${prefix} is off: nothing to detach\n`);
          process.exitCode = ExitCode.Ok;
          return;
        }
        const oldest =
          backlog.oldest === undefined
            ? ""
            : ` (the oldest from ${new Date(backlog.oldest.at).toISOString()})`;
        process.stdout.write(
          `QUEUE_PREFIX=${prefix} exports its results to PostgreSQL: ${backlog.entries} event(s) are not ` +
            `exported yet${oldest}.\n` +
            "Detaching turns the outbox off and drops them: the results of record will miss those results, " +
            "attempts, batches and report rows, and nothing later is exported. The reports on disk and the " +
            "ledger in Redis keep everything as before. A process started with RESULTS_DATABASE_URL later " +
            "turns the outbox on again; stop the ones running first.\n",
        );
        if (options["yes"] !== true && !(await confirmed())) {
          process.stdout.write(
            process.stdin.isTTY
              ? "not detached: nothing was dropped\n"
              : "not detached: no terminal to confirm on; run `invoice-relay db detach --yes` to drop them\n",
          );
          process.exitCode = ExitCode.CouldNotFinish;
          return;
        }
        const dropped = await detachOutbox(ctx.redis, prefix);
        process.stdout.write(
          `dropped ${dropped} event(s) and turned the outbox off: commands now run without ` +
            "RESULTS_DATABASE_URL, and retention no longer waits for an export\n",
        );
        process.exitCode = ExitCode.Ok;
      } finally {
        await ctx.close();
      }
    });
}

/** Asks on the terminal; false at once without one (CI, a pipe). */
async function confirmed(): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await prompt.question("Type yes to drop them and turn the outbox off: ")).trim() === "yes";
  } finally {
    prompt.close();
  }
}
