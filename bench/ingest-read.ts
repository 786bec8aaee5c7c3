// Child process of bench/ingest.ts: reads one file through the full reader pipeline and reports
// rows/s and this process's peak RSS, so each file's memory is measured on its own.
import { readInvoiceFileBatches } from "../src/ingest/read-invoice-file.js";
import { resolveNamespace } from "../src/invoice/key.js";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: ingest-read FILE");
const namespace = resolveNamespace();
const started = process.hrtime.bigint();
const counts: Record<string, number> = {};
for await (const batch of readInvoiceFileBatches(file, { namespace }))
  for (const item of batch) counts[item.kind] = (counts[item.kind] ?? 0) + 1;
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const rows =
  (counts["valid"] ?? 0) + (counts["rejected"] ?? 0) + (counts["duplicate"] ?? 0) + (counts["conflict"] ?? 0);
process.stdout.write(
  `${JSON.stringify({ rows, seconds, counts, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
