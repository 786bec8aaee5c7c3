import { Command } from "commander";
import { batchOption } from "../batch-option.js";
import { openContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { OutputSink } from "../output-sink.js";
import type { CommandFactory } from "../program.js";
import { addCommonOptions, commandConfig, overridesFrom } from "../runtime.js";
import { gatherStatus } from "../gather-status.js";
import { statusText } from "../status-text.js";

export const statusCommand: CommandFactory = () =>
  addCommonOptions(new Command("status"))
    .description(
      "Counts per state and per batch: what is waiting, retrying, failed; a refused API key; report paths. " +
        "Exit 0 (1 only when Redis or the configuration is not usable).",
    )
    .option("--batch <id>", "show only this batch")
    .option("--json", "print one JSON object (stable field names) instead of the tables")
    .action(async (options: Record<string, unknown>) => {
      const batchId = batchOption(options);
      const config = commandConfig(overridesFrom(options));
      const ctx = await openContext(config, { access: "read-only" });
      try {
        const report = await gatherStatus(ctx, batchId);
        const out = new OutputSink(process.stdout);
        await out.write(options["json"] === true ? `${JSON.stringify(report)}\n` : statusText(report));
        await out.finish();
        process.exitCode = ExitCode.Ok;
      } finally {
        await ctx.close();
      }
    });
