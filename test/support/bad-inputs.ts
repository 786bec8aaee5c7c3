import { createHash } from "node:crypto";
import { copyFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { deriveKey, invoiceJson, resolveNamespace } from "../../src/invoice/key.js";
import { normaliseRecord } from "../../src/invoice/normalise.js";
import { summarySchema } from "./drop.js";

/** The small bad-input files kept in the repository (test/fixtures/bad/). */
export const BAD_FIXTURES_DIR = fileURLToPath(new URL("../fixtures/bad/", import.meta.url));

export const CSV_HEADER = "external_id,currency,destination_country,archive_policy";

/** A valid CSV row in CSV_HEADER's column order. */
export function csvRow(id: string): string {
  return `${id},EUR,DE,eu-10y`;
}

/** A valid flat record as JSON and NDJSON files carry it. */
export function jsonRecord(id: string): Record<string, unknown> {
  return { external_id: id, currency: "EUR", destination_country: "DE", archive_policy: "eu-10y" };
}

export async function copyFixtures(dropDir: string, names: readonly string[]): Promise<void> {
  for (const name of names) await copyFile(join(BAD_FIXTURES_DIR, name), join(dropDir, name));
}

const MB = 1024 * 1024;

/**
 * Writes the large cases, too big to keep in the repository, each with valid rows around the bad one:
 * a 10 MB CSV field, 1,000 CSV columns, JSON nested 10,000 deep, and 5 MB NDJSON lines.
 */
export async function writeLargeCases(dropDir: string): Promise<void> {
  await writeFile(
    join(dropDir, "10mb-field.csv"),
    [CSV_HEADER, csvRow("BF-1"), `BF-2,${"E".repeat(10 * MB)},DE,eu-10y`, csvRow("BF-3"), ""].join("\n"),
  );

  const extra = Array.from({ length: 996 }, (_, i) => `extra_${i + 1}`);
  await writeFile(
    join(dropDir, "1000-columns.csv"),
    [
      [CSV_HEADER, ...extra].join(","),
      [csvRow("WC-1"), ...extra.map(() => "x")].join(","),
      [csvRow("WC-2"), ...extra.slice(1).map(() => "x")].join(","),
      "",
    ].join("\n"),
  );

  const deepArray = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
  const deepObject = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
  const valid = (id: string) => JSON.stringify(jsonRecord(id));
  await writeFile(
    join(dropDir, "deep-10000.json"),
    `[${valid("DJ-1")},\n${deepArray},\n` +
      `{"external_id":"DJ-3","currency":${deepArray},"destination_country":"DE","archive_policy":"eu-10y"},\n` +
      `${valid("DJ-4")},\n${valid("DJ-5").slice(0, -1)},"extra":${deepObject}}]\n`,
  );

  await writeFile(
    join(dropDir, "5mb-line.ndjson"),
    [
      JSON.stringify(jsonRecord("NL-1")),
      JSON.stringify({ ...jsonRecord("NL-2"), notes: "n".repeat(5 * MB) }),
      JSON.stringify(jsonRecord(`NL-3${"x".repeat(5 * MB)}`)),
      JSON.stringify(jsonRecord("NL-4")),
      "",
    ].join("\n"),
  );
}

/** Where a dropped file ended: archive/, rejected/ or processing/ (by its claimed name), or still on top. */
export async function finalPlace(dropDir: string, name: string): Promise<string | undefined> {
  for (const sub of ["archive", "rejected", "processing"]) {
    if ((await readdir(join(dropDir, sub))).some((n) => n.endsWith(`--${name}`))) return sub;
  }
  return (await readdir(dropDir)).includes(name) ? "drop" : undefined;
}

/** The claimed name a dropped file carries in archive/ or rejected/. */
export async function claimedPath(dropDir: string, sub: string, name: string): Promise<string> {
  const found = (await readdir(join(dropDir, sub))).find((n) => n.endsWith(`--${name}`));
  if (found === undefined) throw new Error(`${name} is not in ${sub}/`);
  return join(dropDir, sub, found);
}

export const fileSummarySchema = summarySchema.extend({ file_error: z.string().optional() });

/** The key and exact request body of a valid record, as invoice-relay derives and sends them. */
export function sentAs(record: Record<string, unknown>): { key: string; body: string; bodySha256: string } {
  const result = normaliseRecord(record);
  if (!result.ok) throw new Error(`not a valid record: ${JSON.stringify(result.errors)}`);
  const body = invoiceJson(result.invoice);
  return {
    key: deriveKey(result.invoice, resolveNamespace()),
    body,
    bodySha256: createHash("sha256").update(body).digest("hex"),
  };
}
