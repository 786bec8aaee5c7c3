import { Command, CommanderError } from "commander";
import { maskSecrets } from "../log/logger.js";
import { ExitCode } from "./exit-codes.js";
import { packageVersion } from "./package-version.js";

/** A command module: builds its commander Command; its action sets process.exitCode. */
export type CommandFactory = () => Command;

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Values never to print (the process' secrets): masked in the one line an unexpected error prints. */
  readonly secrets?: readonly string[];
}

export function buildProgram(commands: readonly CommandFactory[]): Command {
  const program = new Command("invoice-relay")
    .description(
      "Durable batch submission of invoice files (CSV, JSON, NDJSON) to the invoice routing service, exactly once.",
    )
    .version(packageVersion(), "-V, --version", "print the version of invoice-relay")
    .showHelpAfterError()
    .exitOverride();
  for (const factory of commands) program.addCommand(factory().exitOverride());
  return program;
}

/** Runs the CLI; resolves to the process exit code. Unexpected errors print one line, never a stack, unless LOG_LEVEL=debug. */
export async function runProgram(program: Command, argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === "number" ? process.exitCode : ExitCode.Ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with exit code 0; usage errors with 1.
      return error.exitCode === 0 ? ExitCode.Ok : ExitCode.CouldNotFinish;
    }
    // A flag the command cannot use (FlagError) is bad configuration, like any other error here: exit 1.
    const message = redisLost(error)
      ? "Redis became unreachable while this command was working. Nothing is lost: a file being ingested stays " +
        "in processing/ and queued invoices wait; run the command again once Redis is back (check REDIS_URL, or " +
        "REDIS_CLUSTER_NODES for a Redis Cluster)."
      : error instanceof Error
        ? error.message
        : String(error);
    // Errors name URLs through safeUrl; a driver's own text may still quote a credential.
    const safe = (text: string) => maskSecrets(text, io.secrets ?? []);
    io.stderr.write(`invoice-relay: ${safe(message)}\n`);
    if (process.env["LOG_LEVEL"] === "debug" && error instanceof Error && error.stack)
      io.stderr.write(`${safe(error.stack)}\n`);
    return ExitCode.CouldNotFinish;
  }
}

/**
 * ioredis gives up on a command when Redis stays away (producer connections fail fast by design): on
 * one server after its retries, on a cluster after its redirections ("Too many Cluster redirections",
 * whose last error is the closed connection) or when no node answers at all.
 */
function redisLost(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === "MaxRetriesPerRequestError" ||
      error.name === "ClusterAllFailedError" ||
      /Connection is closed|None of startup nodes is available|^Too many Cluster redirections/.test(
        error.message,
      ))
  );
}
