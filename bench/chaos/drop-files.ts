import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { deriveKey, resolveNamespace } from "../../src/invoice/key.js";
import { normaliseRecord } from "../../src/invoice/normalise.js";

/** One row as the report must show it: the line it starts on and the key derived from its content. */
export interface ExpectedRow {
  readonly line: number;
  readonly externalId: string;
  readonly key: string;
}

export interface DropFile {
  readonly name: string;
  readonly rows: readonly ExpectedRow[];
}

// Every reader takes part: CSV (CRLF), a JSON array, NDJSON and JSONL.
const EXTENSIONS = ["csv", "json", "ndjson", "csv", "jsonl"] as const;
const COUNTRIES = ["DE", "FR", "US", "GB", "JP", "BR", "IN", "SE", "NL", "ES"];
const CURRENCIES = ["EUR", "EUR", "USD", "GBP", "JPY", "BRL", "INR", "SEK", "EUR", "EUR"];
const POLICIES = ["eu-10y", "eu-central-7y", "us-east-7y", "uk-6y", "ap-northeast-1-10y"];

export interface Fields {
  readonly external_id: string;
  readonly currency: string;
  readonly destination_country: string;
  readonly archive_policy: string;
}

function fields(file: number, i: number): Fields {
  const c = i % COUNTRIES.length;
  return {
    external_id: `CHAOS-${file}-${i.toString().padStart(7, "0")}`,
    currency: CURRENCIES[c] ?? "EUR",
    destination_country: COUNTRIES[c] ?? "DE",
    archive_policy: POLICIES[i % POLICIES.length] ?? "eu-10y",
  };
}

/**
 * The key is derived here from the pure core, independently of the readers, so a reader that got a
 * line number or a field wrong shows up as a report line that does not match.
 */
export function expected(f: Fields, line: number): ExpectedRow {
  const result = normaliseRecord(f);
  if (!result.ok)
    throw new Error(`chaos generator made an invalid invoice: ${JSON.stringify(result.errors)}`);
  return { line, externalId: f.external_id, key: deriveKey(result.invoice, resolveNamespace()) };
}

/** Writes `files` drop files holding `invoices` valid invoices in all; returns what each must report. */
export async function writeDropFiles(dir: string, invoices: number, files: number): Promise<DropFile[]> {
  const out: DropFile[] = [];
  for (let f = 0; f < files; f++) {
    const size = Math.floor(invoices / files) + (f < invoices % files ? 1 : 0);
    const ext = EXTENSIONS[f % EXTENSIONS.length] ?? "csv";
    const name = `chaos-${f + 1}.${ext}`;
    const records = Array.from({ length: size }, (_, i) => fields(f + 1, i));
    const rows: ExpectedRow[] = [];
    const lines: string[] = [];
    if (ext === "csv") {
      lines.push("external_id,currency,destination_country,archive_policy\r\n");
      records.forEach((r, i) => {
        lines.push(`${r.external_id},${r.currency},${r.destination_country},${r.archive_policy}\r\n`);
        rows.push(expected(r, i + 2)); // the header is line 1
      });
    } else if (ext === "json") {
      lines.push("[\n");
      records.forEach((r, i) => {
        const doc = {
          external_id: r.external_id,
          currency: r.currency,
          routing: { destination_country: r.destination_country, archive_policy: r.archive_policy },
        };
        lines.push(`${i === 0 ? "" : ",\n"}  ${JSON.stringify(doc)}`);
        rows.push(expected(r, i + 1)); // a JSON array reports the element index
      });
      lines.push("\n]\n");
    } else {
      records.forEach((r, i) => {
        lines.push(`${JSON.stringify(r)}\n`);
        rows.push(expected(r, i + 1));
      });
    }
    await writeText(join(dir, name), lines);
    out.push({ name, rows });
  }
  return out;
}

async function writeText(path: string, parts: readonly string[]): Promise<void> {
  const stream = createWriteStream(path);
  for (const part of parts) if (!stream.write(part)) await once(stream, "drain");
  stream.end();
  await once(stream, "finish");
}
