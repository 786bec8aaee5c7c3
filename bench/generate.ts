import { createWriteStream } from "node:fs";
import { once } from "node:events";

const COUNTRIES = ["DE", "FR", "US", "GB", "JP", "BR", "IN", "SE", "NL", "ES"];
const CURRENCIES = ["EUR", "EUR", "USD", "GBP", "JPY", "BRL", "INR", "SEK", "EUR", "EUR"];
const POLICIES = ["eu-10y", "eu-central-7y", "us-east-7y", "uk-6y", "ap-northeast-1-10y"];

/** One synthetic invoice per index, deterministic, all valid. */
export function syntheticInvoice(i: number): {
  external_id: string;
  currency: string;
  country: string;
  policy: string;
} {
  const c = i % COUNTRIES.length;
  return {
    external_id: `BENCH-${i.toString().padStart(8, "0")}`,
    currency: CURRENCIES[c] ?? "EUR",
    country: COUNTRIES[c] ?? "DE",
    policy: POLICIES[i % POLICIES.length] ?? "eu-10y",
  };
}

async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(path);
  let buffer = "";
  for (const line of lines) {
    buffer += line;
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer)) await once(out, "drain");
      buffer = "";
    }
  }
  out.end(buffer);
  await once(out, "finish");
}

export async function writeCsv(path: string, rows: number, offset = 0): Promise<void> {
  function* lines() {
    yield "external_id,currency,destination_country,archive_policy\r\n";
    for (let i = 0; i < rows; i++) {
      const v = syntheticInvoice(offset + i);
      yield `${v.external_id},${v.currency},${v.country},${v.policy}\r\n`;
    }
  }
  await writeLines(path, lines());
}

export async function writeJsonArray(path: string, rows: number, offset = 0): Promise<void> {
  function* lines() {
    yield "[\n";
    for (let i = 0; i < rows; i++) {
      const v = syntheticInvoice(offset + i);
      const doc = {
        external_id: v.external_id,
        currency: v.currency,
        routing: { destination_country: v.country, archive_policy: v.policy },
      };
      yield `${i === 0 ? "" : ",\n"}  ${JSON.stringify(doc)}`;
    }
    yield "\n]\n";
  }
  await writeLines(path, lines());
}

/** Country names a vendor writes, for the profile benchmark's value map. */
export const COUNTRY_NAMES: Readonly<Record<string, string>> = {
  DE: "Deutschland", FR: "Frankreich", US: "Vereinigte Staaten", GB: "Vereinigtes Königreich", JP: "Japan",
  BR: "Brasilien", IN: "Indien", SE: "Schweden", NL: "Niederlande", ES: "Spanien",
}; // prettier-ignore

/**
 * The same invoices as `writeCsv`, shaped as an SAP export: semicolons, Windows-1252, a preamble line,
 * German column names and country names, read through `profileYaml` below.
 */
export async function writeVendorCsv(path: string, rows: number, offset = 0): Promise<void> {
  const out = createWriteStream(path);
  let buffer = "Export Rechnungsausgang;Mandant 100;;\r\nRechnungsnummer;Währung;Land;Aufbewahrung\r\n";
  for (let i = 0; i < rows; i++) {
    const v = syntheticInvoice(offset + i);
    buffer += `${v.external_id};${v.currency};${COUNTRY_NAMES[v.country] ?? v.country};${v.policy}\r\n`;
    if (buffer.length > 1 << 16) {
      if (!out.write(Buffer.from(buffer, "latin1"))) await once(out, "drain");
      buffer = "";
    }
  }
  // Every character here is in Latin-1, where Windows-1252 and Latin-1 agree byte for byte.
  out.end(Buffer.from(buffer, "latin1"));
  await once(out, "finish");
}

/** The source profile `writeVendorCsv`'s files are read with. */
export function profileYaml(match: string): string {
  const values = Object.entries(COUNTRY_NAMES)
    .map(([code, name]) => `"${name}": ${code}`)
    .join(", ");
  return [
    "profiles:",
    `  - match: "${match}"`,
    '    delimiter: ";"',
    "    encoding: windows-1252",
    "    header_row: 2",
    '    columns: { Rechnungsnummer: external_id, "Währung": currency, Land: destination_country, Aufbewahrung: archive_policy }',
    `    values: { destination_country: { ${values} } }`,
    "",
  ].join("\n");
}
