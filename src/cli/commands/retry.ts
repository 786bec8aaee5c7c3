import { Command } from "commander";
import { retryFailed, type RetryOutcome, type Skipped } from "../../use-cases/retry-failed.js";
import { batchOption, requireKnownBatch } from "../batch-option.js";
import { openContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { OutputSink } from "../output-sink.js";
import type { CommandFactory } from "../program.js";
import { addCommonOptions, commandConfig, commandLogger, overridesFrom } from "../runtime.js";
import { openTracing } from "../tracing.js";

export const retryCommand: CommandFactory = () =>
  addCommonOptions(new Command("retry"))
    .description(
      "Re-enqueue invoices that ended failed (never rejected rows), with their original keys, and re-drive " +
        "jobs stopped by unexpected errors; `run`, `start` or `worker` then submits them. Exit 0.",
    )
    .option("--batch <id>", "only the failed invoices of this batch")
    .action(async (options: Record<string, unknown>) => {
      const batchId = batchOption(options);
      const config = commandConfig(overridesFrom(options));
      const traced = await openTracing(commandLogger(config, "invoice-relay-retry"));
      const ctx = await openContext(config).catch(async (error: unknown) => {
        await traced?.shutdown();
        throw error;
      });
      try {
        if (batchId !== undefined) await requireKnownBatch(ctx.batches, batchId, config.queuePrefix);
        const outcome = await retryFailed({ ...ctx, tracing: traced?.tracing }, batchId);
        const paused = await ctx.queue.isPaused();
        const out = new OutputSink(process.stdout);
        await out.write(retryText(outcome, batchId, paused));
        await out.finish();
        process.exitCode = ExitCode.Ok;
      } finally {
        await ctx.close();
        await traced?.shutdown();
      }
    });

/** What `retry` did and what happens next. Pure. */
function retryText(outcome: RetryOutcome, batchId: string | undefined, paused: boolean): string {
  const scope = batchId === undefined ? "" : ` of batch ${batchId}`;
  const lines = [
    `re-enqueued ${outcome.requeued} failed invoice(s)${scope} with their original keys`,
    `re-drove ${outcome.redriven} job(s) stopped by unexpected errors`,
  ];
  if (outcome.resumed > 0)
    lines.push(
      `finished an interrupted retry: ${outcome.resumed} requeued invoice(s) had no job, now queued`,
    );
  const skipped = (s: Skipped, why: string) => {
    if (s.count > 0) lines.push(`left alone: ${s.count} ${why} (e.g. ${s.examples.join(", ")})`);
  };
  skipped(
    outcome.busy,
    "key(s) whose job is still waiting or running; run `invoice-relay retry` again shortly",
  );
  skipped(
    outcome.noDocument,
    "key(s) with no stored invoice document; drop their file again to re-send them (same keys)",
  );
  skipped(outcome.unreadableJobs, "failed job(s) with unreadable data; drop their file again");
  if (outcome.superseded.count > 0)
    lines.push(
      `not sent: ${outcome.superseded.count} failed invoice(s) now superseded, because a newer version of the ` +
        `same external_id was sent since under another key (e.g. ${outcome.superseded.examples.join(", ")})`,
    );
  if (outcome.requeued + outcome.redriven + outcome.resumed === 0) {
    lines.push(`nothing to retry${scope}`);
    return `${lines.join("\n")}\n`;
  }
  if (outcome.batches.size > 0)
    lines.push(
      `batches waiting again: ${[...outcome.batches].join(", ")}; ` +
        "their reports are rewritten when these invoices are final again",
    );
  if (paused)
    lines.push(
      "the queue is PAUSED: nothing is submitted until it resumes (`invoice-relay status` says why)",
    );
  lines.push(
    "next: run `invoice-relay run` (or keep `invoice-relay start` or `worker` running) to submit them",
  );
  return `${lines.join("\n")}\n`;
}
