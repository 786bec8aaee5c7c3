import { access } from "node:fs/promises";
import { Command } from "commander";
import type { BatchMeta } from "../../ledger/batch-store.js";
import { batchRows } from "../../results/batch-rows.js";
import type { SourceProfile } from "../../ingest/profiles/source-profile.js";
import { loadSourceProfiles } from "../../use-cases/source-profiles.js";
import { exportCsvHeader, exportCsvLine, exportRow } from "../../results/export-records.js";
import { csvLine, REPORT_HEADER, ROW_STATUSES } from "../../results/report-row.js";
import { FILTER_FLAGS, parseResultsFilter } from "../../records/results-filter.js";
import { exportFromDatabase } from "../results-from-database.js";
import { reportRowJson } from "../../results/report-row-json.js";
import { batchOption, requireKnownBatch } from "../batch-option.js";
import { openContext, type AppContext } from "../context.js";
import { BatchFileMissingError } from "../errors/batch-file-missing-error.js";
import { ExitCode } from "../exit-codes.js";
import { OutputSink } from "../output-sink.js";
import type { CommandFactory } from "../program.js";
import { addCommonOptions, commandConfig, commandLogger, overridesFrom } from "../runtime.js";
import { FlagError } from "../errors/flag-error.js";
import { escapedText, shownName } from "../../names/shown-text.js";

type Format = "csv" | "jsonl";

export const resultsCommand: CommandFactory = () =>
  addCommonOptions(new Command("results"))
    .description(
      "Export results to stdout: with --batch, that batch's rows exactly as in its report; without, every " +
        "result record of this QUEUE_PREFIX (one per idempotency key). With RESULTS_DATABASE_URL set, read " +
        "from the results of record in PostgreSQL (no Redis needed), streamed, with the filters below. Exit 0.",
    )
    .option("--batch <id>", "the rows of this batch, as in its report")
    .option("--format <format>", "csv or jsonl", "csv")
    .option("--with-body", "also export the service's stored response body (all records only)")
    .option("--status <status>", "only these statuses; repeat or separate with commas (database)", collect)
    .option("--external-id <id>", "only this external_id (database)")
    .option(
      "--since <time>",
      "last attempt at or after: ISO 8601 time or a duration back, e.g. 24h (database)",
    )
    .option("--until <time>", "last attempt before: ISO 8601 time or a duration back (database)")
    .action(async (options: Record<string, unknown>) => {
      const format = formatOption(options["format"]);
      const batchId = batchOption(options);
      const databaseUrl = commandConfig(overridesFrom(options)).resultsDatabaseUrl;
      if (databaseUrl !== undefined) {
        const filter = parseResultsFilter(options, {
          now: new Date(),
          rowStatuses: [...ROW_STATUSES, "pending"],
        });
        const out = new OutputSink(process.stdout);
        await exportFromDatabase(databaseUrl, filter, format, out);
        await out.finish();
        process.exitCode = ExitCode.Ok;
        return;
      }
      const filterFlag = FILTER_FLAGS.find((flag) => options[camel(flag)] !== undefined);
      if (filterFlag !== undefined)
        throw new FlagError(
          `${filterFlag} filters the results of record in PostgreSQL: set RESULTS_DATABASE_URL to use it ` +
            "(without it, results exports every record from Redis; filter that output instead)",
        );
      const withBody = options["withBody"] === true;
      if (withBody && batchId !== undefined)
        throw new FlagError("--with-body applies to the export of all records; report rows carry no body");
      const config = commandConfig(overridesFrom(options));
      // A batch's rows are read again from its file, with the profile it was ingested with.
      const profiles =
        batchId === undefined
          ? []
          : await loadSourceProfiles(config, commandLogger(config, "invoice-relay-results"));
      const ctx = await openContext(config, { access: "read-only" });
      try {
        const out = new OutputSink(process.stdout);
        if (batchId === undefined) await exportAll(ctx, format, withBody, out);
        else
          await exportBatch(
            ctx,
            profiles,
            await requireKnownBatch(ctx.batches, batchId, config.queuePrefix),
            format,
            out,
          );
        await out.finish();
        process.exitCode = ExitCode.Ok;
      } finally {
        await ctx.close();
      }
    });

/** Gathers a repeated flag's values. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

const camel = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function formatOption(value: unknown): Format {
  if (value === "csv" || value === "jsonl") return value;
  throw new FlagError(`--format must be csv or jsonl (got "${String(value)}")`);
}

/** The batch's report rows, re-read from its file and joined with the ledger: the report, up to now. */
async function exportBatch(
  ctx: AppContext,
  profiles: readonly SourceProfile[],
  meta: BatchMeta,
  format: Format,
  out: OutputSink,
) {
  if (format === "csv" && !(await out.write(`${REPORT_HEADER.join(",")}\r\n`))) return;
  if (meta.state === "rejected") {
    // like its report: no rows, the file was unreadable as a whole
    process.stderr.write(
      `batch ${meta.id} (${shownName(meta.file)}) was rejected as a whole: ${escapedText(meta.file_error ?? "")}\n`,
    );
    return;
  }
  try {
    await access(meta.path);
  } catch {
    throw new BatchFileMissingError(meta.id, meta.path);
  }
  for await (const row of batchRows({ ...ctx, profiles }, meta)) {
    const line = format === "csv" ? csvLine(row) : `${JSON.stringify(reportRowJson(row))}\n`;
    if (!(await out.write(line))) return;
  }
}

async function exportAll(ctx: AppContext, format: Format, withBody: boolean, out: OutputSink) {
  if (format === "csv" && !(await out.write(exportCsvHeader(withBody)))) return;
  let malformed = 0;
  const records = ctx.ledger.scanRecords({
    onMalformed: (key, problem) => {
      if (++malformed <= 5) process.stderr.write(`skipped unreadable result record ${key}: ${problem}\n`);
    },
  });
  for await (const record of records) {
    const row = exportRow(record, withBody);
    const line = format === "csv" ? exportCsvLine(row, withBody) : `${JSON.stringify(row)}\n`;
    if (!(await out.write(line))) return;
  }
  if (malformed > 5) process.stderr.write(`skipped ${malformed} unreadable result records in all\n`);
}
