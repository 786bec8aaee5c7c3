import { Command } from "commander";
import { resolveNamespace } from "../../invoice/key.js";
import { checkFile, type CheckedFile } from "../../use-cases/check-file.js";
import { loadSourceProfiles } from "../../use-cases/source-profiles.js";
import { ExitCode } from "../exit-codes.js";
import { OutputSink } from "../output-sink.js";
import type { CommandFactory } from "../program.js";
import { commandConfig, commandLogger, overridesFrom } from "../runtime.js";
import { checkText } from "../check-text.js";
import { FlagError } from "../errors/flag-error.js";

export const checkCommand: CommandFactory = () =>
  new Command("check")
    .description(
      "A dry run over drop files, with no Redis and no service: the source profile each matches, the " +
        "encoding and delimiter found, rows read/valid/rejected with the errors, and the first documents " +
        "with their keys exactly as they would be sent. Exit 0 when every row is valid, 2 otherwise, 1 " +
        "when a file cannot be used.",
    )
    .argument("<files...>", "drop files to check (they are only read)")
    .option("--sources <file>", "source profiles file (env SOURCES_FILE; default DROP_DIR/sources.yaml)")
    .option("--drop-dir <dir>", "where to look for sources.yaml when --sources is not given (env DROP_DIR)")
    .option("--show <n>", "how many documents to show per file", "3")
    .option("--json", "print one JSON object per file (stable field names) instead of text")
    .option("--log-level <level>", "log level (env LOG_LEVEL)")
    .action(async (files: string[], options: Record<string, unknown>) => {
      const config = commandConfig(overridesFrom(options));
      const show = Number(options["show"]);
      if (!Number.isInteger(show) || show < 0)
        throw new FlagError("--show must be a whole number, 0 or more");
      // A broken profiles file stops here with its message (exit 1), as it stops `run`.
      const profiles = await loadSourceProfiles(config, commandLogger(config, "invoice-relay-check"));
      const namespace = resolveNamespace(config.idempotencyNamespace);
      const out = new OutputSink(process.stdout);
      const checked: CheckedFile[] = [];
      for (const file of files) {
        const result = await checkFile(file, { namespace, profiles, show });
        checked.push(result);
        await out.write(options["json"] === true ? `${JSON.stringify(result)}\n` : checkText(result));
      }
      await out.finish();
      process.exitCode = checked.some((c) => c.file_error !== null)
        ? ExitCode.CouldNotFinish
        : checked.some((c) => c.rejected + c.conflict > 0)
          ? ExitCode.FinishedWithProblems
          : ExitCode.Ok;
    });
