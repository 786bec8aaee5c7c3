import fc from "fast-check";
import { COUNTRY_CODES, CURRENCY_CODES } from "../../src/invoice/iso-codes.js";

/** A valid invoice in canonical form (trimmed, codes upper-case, policy lower-case). */
export interface Invoice {
  readonly external_id: string;
  readonly currency: string;
  readonly destination_country: string;
  readonly archive_policy: string;
}

/** How one invoice is spelled in a file: none of these may change its key. */
export interface Spelling {
  /** Nested `routing: {...}`, flat names, or `routing.`-prefixed names (JSON/NDJSON only). */
  readonly shape: "nested" | "flat" | "dotted";
  readonly upperKeys: boolean;
  readonly padValues: boolean;
  readonly otherCase: boolean;
  /** Adds `schema_version` / `document_type` with the default value or left empty. */
  readonly defaults: "absent" | "explicit" | "empty";
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const TRICKY = [",", '"', " ", "a", "Z", "é", "😀", "\u2028", "]", "}", "{", "[", "\\", ";", "'", "\u00a0x"];

export const externalIdArb: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ unit: "binary", minLength: 1, maxLength: 24 }),
    fc.string({ unit: fc.constantFrom(...TRICKY), minLength: 1, maxLength: 12 }),
    fc.stringMatching(/^[A-Z]{2,4}-\d{1,6}$/),
  )
  .filter(
    (id) => id.trim() === id && id.length > 0 && !CONTROL.test(id) && Buffer.from(id).toString() === id,
  );

const archivePolicyArb = fc
  .tuple(
    fc.array(fc.stringMatching(/^[a-z0-9]{1,6}$/), { minLength: 1, maxLength: 3 }),
    fc.integer({ min: 1, max: 999 }),
    fc.constantFrom("y", "m", "d"),
  )
  .map(([parts, n, unit]) => `${parts.join("-")}-${n}${unit}`);

export const invoiceArb: fc.Arbitrary<Invoice> = fc.record({
  external_id: externalIdArb,
  currency: fc.constantFrom(...CURRENCY_CODES),
  destination_country: fc.constantFrom(...COUNTRY_CODES),
  archive_policy: archivePolicyArb,
});

export const spellingArb: fc.Arbitrary<Spelling> = fc.record({
  shape: fc.constantFrom("nested", "flat", "dotted"),
  upperKeys: fc.boolean(),
  padValues: fc.boolean(),
  otherCase: fc.boolean(),
  defaults: fc.constantFrom("absent", "explicit", "empty"),
});

/** Invoices with distinct external_ids, each with its own spelling. */
export const invoicesArb = fc.uniqueArray(fc.tuple(invoiceArb, spellingArb), {
  minLength: 1,
  maxLength: 8,
  selector: ([invoice]) => invoice.external_id,
});

/** Text that may hold anything a CSV field or JSON string can: separators, quotes, line breaks. */
export const noteArb = fc.string({
  unit: fc.constantFrom("a", " ", ",", '"', "\n", "\r\n", "\r", "é", "😀", "{", "]"),
  maxLength: 10,
});

/** A line end as NDJSON takes it. */
export const eolArb = fc.constantFrom("\n", "\r\n");

/** A CSV record end: LF, CRLF, or CR alone (Excel's "CSV (Macintosh)"). */
export const csvEolArb = fc.constantFrom("\n", "\r\n", "\r");

/** The line ends of a CSV file, used in turn: one kind, or a mix. */
export const csvEolsArb = fc.array(csvEolArb, { minLength: 1, maxLength: 3 });

/** Physical lines `text` ends, as a CSV file counts them: CRLF once, a CR or LF alone once each. */
export function lineEndsIn(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}

/**
 * The span the splitter names for a record written as `cells` from `line`: its first cell holding a line
 * break, from the line its quote opens on to the line it closes on; none when no cell holds one.
 */
export function quotedSpanOf(
  cells: readonly string[],
  separator: string,
  line: number,
): { quoted?: { opened: number; closed: number } } {
  const k = cells.findIndex((cell) => lineEndsIn(cell) > 0);
  if (k === -1) return {};
  const opened = line + lineEndsIn(cells.slice(0, k).join(separator));
  return { quoted: { opened, closed: opened + lineEndsIn(cells[k] ?? "") } };
}

/** Bytes worth throwing at a reader: random, or a valid file cut, flipped or with bytes slipped in. */
export function damagedArb(valid: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const special = [
    0x2c, 0x22, 0x0a, 0x0d, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x5c, 0x20, 0xff, 0xc3, 0xe2, 0xf0, 0x80, 0xef,
  ];
  const edit = fc.tuple(
    fc.nat(),
    fc.constantFrom("cut", "flip", "insert", "delete"),
    fc.constantFrom(...special),
  );
  const damaged = fc.tuple(valid, fc.array(edit, { minLength: 1, maxLength: 4 })).map(([bytes, edits]) => {
    const out = [...bytes];
    for (const [at, kind, byte] of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      if (kind === "cut") out.length = i;
      else if (kind === "flip" && out.length > 0) out[i] = byte;
      else if (kind === "insert") out.splice(i, 0, byte);
      else out.splice(i, 1);
    }
    return Uint8Array.from(out);
  });
  return fc.oneof(fc.uint8Array({ maxLength: 200 }), valid, damaged, damaged);
}

/** Ways to cut bytes into chunks: tiny sizes, cycled. */
export const chunkSizesArb = fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 6 });
