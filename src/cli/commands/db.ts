import { Command } from "commander";
import { DATABASE_URL_SETTING } from "../../config/database-url.js";
import { safeUrl } from "../../config/url-credentials.js";
import type { Config } from "../../config/load.js";
import { migrate } from "../../records/migrations.js";
import { openPool, type Pool } from "../../records/pool.js";
import { schemaStatus } from "../../records/schema-version.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";
import { commandConfig, commandLogger, overridesFrom } from "../runtime.js";
import { dbDetachCommand } from "./db-detach.js";
import { ConfigError } from "../../config/errors/config-error.js";

/**
 * `db migrate` and `db status`: the schema of the results of record in RESULTS_DATABASE_URL; `db detach`:
 * back to Redis only.
 */
export const dbCommand: CommandFactory = () =>
  new Command("db")
    .description(
      "The PostgreSQL of the results of record (RESULTS_DATABASE_URL): apply its schema migrations, " +
        "show where its schema stands, or detach the deployment from it.",
    )
    .addCommand(
      new Command("migrate")
        .description(
          "Apply this version's pending schema migrations, in one transaction under an advisory lock (two " +
            "at once are safe: the second waits, then has nothing to do). Exit 0 when the schema is " +
            "current, 1 when the database cannot be reached or a migration fails.",
        )
        .option("--log-level <level>", "log level (env LOG_LEVEL)")
        .action(async (options: Record<string, unknown>) => {
          await withDatabase(options, async (pool, config, where) => {
            const applied = await migrate(pool, { logger: commandLogger(config, "invoice-relay-db") });
            for (const name of applied) process.stdout.write(`applied ${name}\n`);
            const status = await schemaStatus(pool);
            const version = status.applied.at(-1) ?? "(none)";
            process.stdout.write(
              applied.length === 0
                ? `nothing to apply: the schema at ${where} is current (${version})\n`
                : `the schema at ${where} is current (${version})\n`,
            );
            process.exitCode = ExitCode.Ok;
          });
        }),
    )
    .addCommand(
      new Command("status")
        .description(
          "The schema version the database has against the one this version needs. Exit 0 when it is " +
            "current, 1 when migrations are pending (run `invoice-relay db migrate`) or it cannot be reached.",
        )
        .option("--log-level <level>", "log level (env LOG_LEVEL)")
        .action(async (options: Record<string, unknown>) => {
          await withDatabase(options, async (pool, _config, where) => {
            const status = await schemaStatus(pool);
            const lines = [
              `database: ${where}`,
              `applied:  ${status.applied.at(-1) ?? "(none: never migrated)"} (${status.applied.length} migration(s))`,
              `needed:   ${status.expected.at(-1) ?? "(none)"} (${status.expected.length} migration(s))`,
            ];
            if (status.unknown.length > 0)
              lines.push(
                `newer:    ${status.unknown.join(", ")} (applied by a newer version; fine for this one)`,
              );
            if (status.pending.length > 0)
              lines.push(
                `pending:  ${status.pending.join(", ")}`,
                "the schema is out of date: run `invoice-relay db migrate`",
              );
            else lines.push("the schema is current");
            process.stdout.write(`${lines.join("\n")}\n`);
            process.exitCode = status.pending.length > 0 ? ExitCode.CouldNotFinish : ExitCode.Ok;
          });
        }),
    )
    .addCommand(dbDetachCommand());

/** Loads the configuration (RESULTS_DATABASE_URL required), opens a pool, runs `work`, closes the pool. */
async function withDatabase(
  options: Record<string, unknown>,
  work: (pool: Pool, config: Config, where: string) => Promise<void>,
): Promise<void> {
  const config = commandConfig(overridesFrom(options), ["resultsDatabaseUrl"]);
  const url = config.resultsDatabaseUrl;
  if (url === undefined) throw new ConfigError(["RESULTS_DATABASE_URL is not set"]); // loadConfig already said so
  const pool = await openPool(url, { applicationName: "invoice-relay-db" });
  try {
    await work(pool, config, safeUrl(url, DATABASE_URL_SETTING));
  } finally {
    await pool.end();
  }
}
