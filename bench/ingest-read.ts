// Child process of bench/ingest.ts: reads one file through the full reader pipeline (with the source
// profile SOURCES_FILE gives it, if any) and reports
// rows/s and this process's peak RSS, so each file's memory is measured on its own.
import { basename } from "node:path";
import { loadProfiles } from "../src/ingest/profiles/load-profiles.js";
import { formatFor, profileFor } from "../src/ingest/profiles/profile-match.js";
import { readInvoiceFileBatches } from "../src/ingest/read-invoice-file.js";
import { resolveNamespace } from "../src/invoice/key.js";

const [file, sources] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: ingest-read FILE [SOURCES_FILE]");
const namespace = resolveNamespace();
// Loading the profiles is part of what a command does before reading, so it is timed too.
const started = process.hrtime.bigint();
const profile = sources === undefined ? undefined : profileFor(await loadProfiles(sources), basename(file));
if (sources !== undefined && profile === undefined)
  throw new Error(`no profile of ${sources} matches ${file}`);
const format = formatFor(basename(file), profile);
const counts: Record<string, number> = {};
for await (const batch of readInvoiceFileBatches(file, { namespace, profile, format }))
  for (const item of batch) counts[item.kind] = (counts[item.kind] ?? 0) + 1;
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const rows =
  (counts["valid"] ?? 0) + (counts["rejected"] ?? 0) + (counts["duplicate"] ?? 0) + (counts["conflict"] ?? 0);
process.stdout.write(
  `${JSON.stringify({ rows, seconds, counts, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
