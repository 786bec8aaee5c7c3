import { existsSync } from "node:fs";
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
import { SourcesFileMissingError } from "../../ingest/profiles/errors/sources-file-missing-error.js";
import { loadRemoteSources } from "../../ingest/sftp/load-remote-sources.js";
import { openSftpSession } from "../../ingest/sftp/session.js";
import { checkRemoteSource } from "../../use-cases/remote-check.js";
import type { Config } from "../../config/load.js";
import { escapedText, shownName } from "../../names/shown-text.js";

export const checkCommand: CommandFactory = () =>
  new Command("check")
    .description(
      "A dry run over drop files, with no Redis and no service: the source profile each matches, the " +
        "encoding and delimiter found, rows read/valid/rejected with the errors, and the first documents " +
        "with their keys exactly as they would be sent. Exit 0 when every row is valid, 2 otherwise, 1 " +
        "when a file cannot be used.",
    )
    .argument("[files...]", "drop files to check (they are only read)")
    .option(
      "--source <name>",
      "an SFTP source of the sources file: connect, and list what a pass would take and why the rest is left",
    )
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
      const profiles = await loadSourceProfiles(config, commandLogger(config, "invoice-relay-check")).catch(
        (error: unknown) => {
          const file = options["sources"];
          if (!(error instanceof SourcesFileMissingError) || typeof file !== "string") throw error;
          throw new FlagError(
            `--sources ${file}: ${error.reason}; --sources names the source profiles file ` +
              `(docs/configuration.md, "Source profiles")${lookalikeHint("--sources", file)}`,
          );
        },
      );
      if (typeof options["source"] === "string") {
        process.exitCode = await checkSource(config, options["source"], options["json"] === true);
        return;
      }
      if (files.length === 0)
        throw new FlagError("name drop files to check, or --source NAME for an SFTP source");
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

async function checkSource(config: Config, name: string, json: boolean): Promise<number> {
  const sources = await loadRemoteSources(config);
  const source = sources.find((s) => s.name === name);
  if (source === undefined)
    throw new FlagError(
      `--source ${name}: no SFTP source of that name in the sources file; ` +
        (sources.length === 0
          ? "it has none (docs/sftp.md)"
          : `it has ${sources.map((s) => s.name).join(", ")}`) +
        lookalikeHint("--source", name),
    );
  const files = await checkRemoteSource(source, openSftpSession, config.settleMs);
  if (json) process.stdout.write(`${JSON.stringify({ source: name, files })}\n`);
  else {
    process.stdout.write(
      `SFTP source ${name}: ${files.filter((f) => f.take).length} file(s) would be taken\n`,
    );
    for (const f of files) {
      const size = f.size === null ? "no size listed" : `${f.size} bytes`;
      process.stdout.write(
        `  ${f.take ? "take " : "leave"}  ${shownName(f.name)}  (${size}) ${escapedText(f.why)}\n`,
      );
    }
  }
  return ExitCode.Ok;
}

/**
 * `--source` (an SFTP source, by name) and `--sources` (the profiles file) differ by one letter and both
 * take any text, so commander cannot tell one typed for the other: the value can. A value naming a file
 * (a path, a YAML name) was meant for `--sources`; a bare name for `--source`.
 */
function lookalikeHint(flag: "--source" | "--sources", value: string): string {
  const looksLikeFile = value.includes("/") || /\.ya?ml$/i.test(value) || existsSync(value);
  if (flag === "--source" && looksLikeFile)
    return `. Did you mean --sources ${value} (the source profiles file)?`;
  if (flag === "--sources" && !looksLikeFile && /^[\w-]+$/.test(value))
    return `. Did you mean --source ${value} (the SFTP source of that name)?`;
  return "";
}
