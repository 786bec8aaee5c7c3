import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ENCODINGS, type Encoding, type SourceProfile } from "../../src/ingest/profiles/source-profile.js";
import { readInvoices, type FileFormat } from "../../src/ingest/read-invoice-file.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import { chunkSizesArb, invoiceArb, spellingArb } from "./arbitraries.js";
import { layoutArb, WRITERS } from "./file-writers.js";
import { bytesOf, chunked, fileErrorOf, HEADER, keysOf, ns, outline, plain, row } from "./read-helpers.js";

const FORMATS: readonly FileFormat[] = ["csv", "ndjson", "json"];

function profileFor(encoding: Encoding): SourceProfile {
  return {
    name: 'sources.yaml, profile 1 ("vendor-*")',
    match: "vendor-*",
    encoding,
    columns: new Map(),
    defaults: {},
    values: new Map(),
  };
}

async function read(
  bytes: Uint8Array,
  format: FileFormat,
  sizes: readonly number[],
  profile?: SourceProfile,
): Promise<ReadItem[]> {
  const items: ReadItem[] = [];
  const options = { namespace: ns, format, displayName: "vendor-1.file", profile };
  for await (const item of readInvoices(chunked(bytes, sizes), options)) items.push(item);
  return items;
}

/**
 * Encoders written out by hand for what the tests put in files, so that the decoder is not checked
 * against itself: these characters' bytes are those of the encodings' published tables.
 */
const SINGLE_BYTE: Readonly<Record<string, ReadonlyMap<string, number>>> = {
  "windows-1252": new Map([
    ["€", 0x80],
    ["„", 0x84],
    ["Š", 0x8a],
    ["’", 0x92],
    ["œ", 0x9c],
    ["Ÿ", 0x9f],
  ]),
  "iso-8859-1": new Map(),
  "iso-8859-15": new Map([
    ["€", 0xa4],
    ["Š", 0xa6],
    ["ž", 0xb8],
    ["Œ", 0xbc],
    ["œ", 0xbd],
    ["Ÿ", 0xbe],
  ]),
};
/** Latin-1 characters iso-8859-15 replaced (by €, Š, š, Ž, ž, Œ, œ, Ÿ). */
const NOT_IN_ISO_8859_15 = new Set(["¤", "¦", "¨", "´", "¸", "¼", "½", "¾"]);

function encode(text: string, encoding: Encoding): Uint8Array {
  if (encoding === "utf-8") return bytesOf(text);
  if (encoding === "utf-16le") return Uint8Array.from(Buffer.from(text, "utf16le"));
  if (encoding === "utf-16be") return Uint8Array.from(Buffer.from(text, "utf16le").swap16());
  const extra = SINGLE_BYTE[encoding] ?? new Map<string, number>();
  return Uint8Array.from(text, (char) => {
    const code = char.codePointAt(0) ?? 0;
    const byte =
      extra.get(char) ??
      (code < 0x80 ||
      (code >= 0xa0 && code <= 0xff && !(encoding === "iso-8859-15" && NOT_IN_ISO_8859_15.has(char)))
        ? code
        : undefined);
    if (byte === undefined)
      throw new Error(`the test put ${char} into a ${encoding} file, which cannot hold it`);
    return byte;
  });
}

/** What each encoding can hold of the characters vendors' external ids have. */
const LATIN = ["A", "z", "0", "7", "-", "/", "é", "ü", "ß", "Ä", "ñ"];
const UNICODE = [...LATIN, "€", "Ł", "ő", "請", "求", "書", "😀", "𝄞"];
const ALPHABETS: Readonly<Record<Encoding, readonly string[]>> = {
  "utf-8": UNICODE,
  "utf-16le": UNICODE,
  "utf-16be": UNICODE,
  "windows-1252": [...LATIN, "€", "„", "Š", "’", "œ", "Ÿ"],
  "iso-8859-1": [...LATIN, "£", "¥", "§", "©", "½", "þ"],
  "iso-8859-15": [...LATIN, "€", "Š", "ž", "Œ", "œ", "Ÿ"],
};
const canHoldAnything = (encoding: Encoding): boolean => encoding.startsWith("utf-");

/** Invoices with distinct external ids made of what the encoding can hold, and a file layout. */
function fileArb(encoding: Encoding, format: FileFormat): fc.Arbitrary<string> {
  const idArb = fc.string({ unit: fc.constantFrom(...ALPHABETS[encoding]), minLength: 1, maxLength: 10 });
  const rowsArb = fc.uniqueArray(
    fc
      .tuple(fc.tuple(invoiceArb, idArb), spellingArb)
      .map(([[invoice, id], spelling]) => [{ ...invoice, external_id: id }, spelling] as const),
    { minLength: 1, maxLength: 6, selector: ([invoice]) => invoice.external_id },
  );
  return fc.tuple(rowsArb, layoutArb).map(([rows, layout]) => {
    const fitted = canHoldAnything(encoding)
      ? layout
      : // A byte order mark is Unicode's; the notes' emoji cannot be written in an 8-bit encoding.
        { ...layout, bom: false, notes: layout.notes?.map((note) => note.replaceAll("😀", "ß")) };
    return WRITERS[format](rows, fitted).text;
  });
}

describe("encodings", () => {
  describe.each(ENCODINGS)("a %s file read through its profile", (encoding) => {
    it.each(FORMATS)(
      "when the invoices are a %s file cut into any chunks, then it reads as the UTF-8 original: same documents, lines and keys",
      async (format) => {
        await fc.assert(
          fc.asyncProperty(fileArb(encoding, format), chunkSizesArb, async (text, sizes) => {
            const original = await read(bytesOf(text), format, []);
            expect(original.filter((item) => item.kind === "valid").length).toBeGreaterThan(0);
            const encoded = await read(encode(text, encoding), format, sizes, profileFor(encoding));
            expect(plain(encoded)).toEqual(plain(original));
          }),
          { numRuns: 60 },
        );
      },
    );
  });

  it("when the same invoices come as UTF-8, UTF-16 and Windows-1252, then their keys are the same", async () => {
    const text = `${HEADER}\n${row("Rechnung-Müller-€1")}\n${row("Faktúra-ß-2")}\n`;
    const utf8 = keysOf(await read(bytesOf(text), "csv", []));
    expect(utf8).toHaveLength(2);
    for (const encoding of ["utf-16le", "utf-16be", "windows-1252", "iso-8859-15"] as const) {
      expect(keysOf(await read(encode(text, encoding), "csv", [3], profileFor(encoding)))).toEqual(utf8);
    }
  });

  it.each([
    ["UTF-16 LE", [0xff, 0xfe], "utf-16le"],
    ["UTF-16 BE", [0xfe, 0xff], "utf-16be"],
  ] as const)(
    "when a %s file with its byte order mark has no profile, then it is read by the mark",
    async (_n, mark, encoding) => {
      const text = `${HEADER}\n${row("請求書-1")}\n${row("Rechnung-😀-2")}\n`;
      const items = await read(Uint8Array.from([...mark, ...encode(text, encoding)]), "csv", [1, 2, 3]);
      expect(plain(items)).toEqual(plain(await read(bytesOf(text), "csv", [])));
      expect(outline(items)).toEqual(["valid@2", "valid@3"]);
    },
  );

  it("when a Windows-1252 file comes without a profile, then it is rejected naming the byte, line and the `encoding:` setting", async () => {
    const text = `${HEADER}\n${row("INV-1")}\n${row("Müller-2")}\n`;
    const items = await read(encode(text, "windows-1252"), "csv", [5]);
    expect(outline(items)).toEqual(["valid@2", "file-error"]);
    const { error } = fileErrorOf(items);
    expect(error.position).toEqual({ line: 3, byteOffset: text.indexOf("ü") });
    expect(error.message).toContain("not UTF-8: invalid byte 0xfc");
    expect(error.message).toContain("name its encoding in a source profile (`encoding:` in SOURCES_FILE");
  });

  it("when a .csv file is gzip-compressed, then it is rejected as gzip with what to do, not sent to name an encoding", async () => {
    const { gzipSync } = await import("node:zlib");
    for (const profile of [undefined, profileFor("windows-1252")]) {
      const items = await read(gzipSync(`${HEADER}\n${row("INV-1")}\n`), "csv", [1], profile);
      expect(outline(items)).toEqual(["file-error"]);
      expect(fileErrorOf(items).error.message).toBe(
        "vendor-1.file (line 1, byte offset 0): the file is gzip-compressed, not text: decompress it " +
          "(gunzip, or 7-Zip on Windows) and drop the file it holds. Fix the file and drop it again.",
      );
    }
  });

  it.each([
    ["utf-16le", "UTF-16LE"],
    ["utf-16be", "UTF-16BE"],
  ] as const)(
    "when a %s file has no byte order mark and no profile names it, then the file is rejected as UTF-16, not for its columns",
    async (encoding, shown) => {
      const bytes = encode(`${HEADER}\n${row("Müller-1")}\n`, encoding);
      for (const format of FORMATS) {
        const items = await read(bytes, format, [3]);
        expect(outline(items)).toEqual(["file-error"]);
        expect(fileErrorOf(items).error.problem).toBe(
          `the file looks like ${shown} without a byte order mark (every second byte of its start is NUL); ` +
            `save it as UTF-8, or name \`encoding: ${encoding}\` in a source profile (SOURCES_FILE, see ` +
            "docs/vendor-files.md, Vendor files)",
        );
      }
      const named = await read(bytes, "csv", [3], profileFor(encoding));
      expect(outline(named)).toEqual(["valid@2"]);
    },
  );

  it("when the file's byte order mark contradicts the profile, then the file is rejected naming both", async () => {
    const bytes = Uint8Array.from([0xff, 0xfe, ...encode(`${HEADER}\n${row("INV-1")}\n`, "utf-16le")]);
    const items = await read(bytes, "csv", [], profileFor("windows-1252"));
    expect(outline(items)).toEqual(["file-error"]);
    const { error } = fileErrorOf(items);
    expect(error.position).toEqual({ line: 1, byteOffset: 0 });
    expect(error.problem).toContain("starts with a utf-16le byte order mark");
    expect(error.problem).toContain('sources.yaml, profile 1 ("vendor-*") says `encoding: windows-1252`');
  });

  it("when a UTF-16 file ends in an odd byte, then the rows before it are read and the file is rejected at that byte", async () => {
    const body = encode(`${HEADER}\n${row("INV-1")}\n${row("INV-2")}`, "utf-16be");
    const bytes = Uint8Array.from([...body, 0x0a]);
    for (const sizes of [[], [1], [3], [4096]]) {
      const items = await read(bytes, "csv", sizes, profileFor("utf-16be"));
      expect(outline(items)).toEqual(["valid@2", "file-error"]);
      const { error } = fileErrorOf(items);
      expect(error.position).toEqual({ line: 3, byteOffset: body.length });
      expect(error.problem).toContain("not utf-16be as");
      expect(error.problem).toContain("ends in an odd byte");
    }
  });
});
