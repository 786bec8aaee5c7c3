import fc from "fast-check";
import type { FileFormat } from "../../src/ingest/read-invoice-file.js";
import { csvEolsArb, eolArb, lineEndsIn, noteArb, type Invoice, type Spelling } from "./arbitraries.js";

/** A file made from invoices, with the line (or element index) each record must be reported at. */
export interface Written {
  readonly format: FileFormat;
  readonly text: string;
  readonly lines: readonly number[];
  /** The field or column invoices do not have, if the file has one. */
  readonly extra: string | undefined;
}

/** Choices about the file as a whole; fast-check varies them. */
export interface Layout {
  /** NDJSON's line end. */
  readonly eol: string;
  /** CSV's line ends, used in turn (a mix of LF, CRLF and CR when more than one). */
  readonly csvEols: readonly string[];
  readonly bom: boolean;
  readonly blanks: readonly number[];
  readonly notes: readonly string[] | undefined;
  readonly trailingEol: boolean;
  // CSV
  readonly routingPrefix: boolean;
  readonly upperHeader: boolean;
  readonly quoteAll: boolean;
  readonly rotate: number;
  readonly defaults: "absent" | "explicit" | "empty";
  // JSON
  readonly wrapped: boolean;
  readonly pretty: boolean;
}

export const layoutArb: fc.Arbitrary<Layout> = fc.record({
  eol: eolArb,
  csvEols: csvEolsArb,
  bom: fc.boolean(),
  blanks: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 8 }),
  notes: fc.option(fc.array(noteArb, { minLength: 8, maxLength: 8 }), { nil: undefined }),
  trailingEol: fc.boolean(),
  routingPrefix: fc.boolean(),
  upperHeader: fc.boolean(),
  quoteAll: fc.boolean(),
  rotate: fc.nat({ max: 7 }),
  defaults: fc.constantFrom("absent", "explicit", "empty"),
  wrapped: fc.boolean(),
  pretty: fc.boolean(),
});

type Field = keyof Invoice;

/** A value as a person might type it: other case, padded; normalisation undoes both. */
function spell(invoice: Invoice, field: Field, spelling: Spelling): string {
  let value = invoice[field];
  if (spelling.otherCase && field !== "external_id") {
    value = field === "archive_policy" ? value.toUpperCase() : value.toLowerCase();
  }
  return spelling.padValues ? ` ${value}\t` : value;
}

const defaultsOf = (mode: Spelling["defaults"]): Record<string, string> =>
  mode === "explicit"
    ? { schema_version: "2026-10-16", document_type: "invoice" }
    : mode === "empty"
      ? { schema_version: "", document_type: "" }
      : {};

/** An invoice as a JSON object in the given spelling. */
export function objectOf(invoice: Invoice, spelling: Spelling, note?: string): Record<string, unknown> {
  const key = (name: string): string => (spelling.upperKeys ? name.toUpperCase() : name);
  const value = (field: Field): string => spell(invoice, field, spelling);
  const routing =
    spelling.shape === "nested"
      ? {
          [key("routing")]: {
            [key("archive_policy")]: value("archive_policy"),
            [key("destination_country")]: value("destination_country"),
          },
        }
      : spelling.shape === "flat"
        ? {
            [key("destination_country")]: value("destination_country"),
            [key("archive_policy")]: value("archive_policy"),
          }
        : {
            [key("routing.destination_country")]: value("destination_country"),
            [key("routing.archive_policy")]: value("archive_policy"),
          };
  return {
    ...routing,
    [key("external_id")]: value("external_id"),
    [key("currency")]: value("currency"),
    ...defaultsOf(spelling.defaults),
    ...(note === undefined ? {} : { memo: note }),
  };
}

const quote = (value: string, always: boolean): string =>
  always || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

export function writeCsv(rows: readonly (readonly [Invoice, Spelling])[], layout: Layout): Written {
  const prefix = layout.routingPrefix ? "routing." : "";
  const columns: string[] = [
    "external_id",
    "currency",
    `${prefix}destination_country`,
    `${prefix}archive_policy`,
  ];
  if (layout.defaults !== "absent") columns.push("schema_version", "document_type");
  if (layout.notes !== undefined) columns.push("note");
  const order = columns.map((_, i) => columns[(i + layout.rotate) % columns.length] ?? "");
  let text =
    (layout.bom ? "\uFEFF" : "") +
    order.map((name) => (layout.upperHeader ? name.toUpperCase() : name)).join(",");
  let ends = 0;
  const eol = (): string => layout.csvEols[ends++ % layout.csvEols.length] ?? "\n";
  const lines: number[] = [];
  rows.forEach(([invoice, spelling], n) => {
    const blank = layout.blanks[n] ?? 0;
    for (let k = 0; k <= blank; k++) text += eol();
    // A CR then an LF is one line end wherever they meet: count the text written, not the ends added.
    lines.push(lineEndsIn(text) + 1);
    const values: Record<string, string> = {
      ...defaultsOf(layout.defaults),
      external_id: spell(invoice, "external_id", spelling),
      currency: spell(invoice, "currency", spelling),
      [`${prefix}destination_country`]: spell(invoice, "destination_country", spelling),
      [`${prefix}archive_policy`]: spell(invoice, "archive_policy", spelling),
      note: layout.notes?.[n] ?? "",
    };
    text += order.map((name) => quote(values[name] ?? "", layout.quoteAll)).join(",");
  });
  if (layout.trailingEol) text += eol();
  const extra = layout.notes === undefined ? undefined : layout.upperHeader ? "NOTE" : "note";
  return { format: "csv", text, lines, extra };
}

export function writeNdjson(rows: readonly (readonly [Invoice, Spelling])[], layout: Layout): Written {
  let text = layout.bom ? "\uFEFF" : "";
  let line = 1;
  const lines: number[] = [];
  rows.forEach(([invoice, spelling], n) => {
    const blank = layout.blanks[n] ?? 0;
    text += `${" ".repeat(n % 2)}${layout.eol}`.repeat(blank);
    line += blank;
    lines.push(line);
    text += JSON.stringify(objectOf(invoice, spelling, layout.notes?.[n]));
    if (n < rows.length - 1 || layout.trailingEol) text += layout.eol;
    line++;
  });
  return { format: "ndjson", text, lines, extra: layout.notes === undefined ? undefined : "memo" };
}

export function writeJson(rows: readonly (readonly [Invoice, Spelling])[], layout: Layout): Written {
  const objects = rows.map(([invoice, spelling], n) => objectOf(invoice, spelling, layout.notes?.[n]));
  const document = layout.wrapped ? { count: objects.length, invoices: objects } : objects;
  const text = (layout.bom ? "\uFEFF" : "") + JSON.stringify(document, null, layout.pretty ? 2 : undefined);
  return {
    format: "json",
    text,
    lines: objects.map((_, n) => n + 1),
    extra: layout.notes === undefined ? undefined : "memo",
  };
}

export const WRITERS = { csv: writeCsv, ndjson: writeNdjson, json: writeJson } as const;
