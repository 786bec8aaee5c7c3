import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvRecords, MAX_CSV_RECORD_CHARS, type CsvRecord } from "../../src/ingest/readers/csv-records.js";
import { eolArb, noteArb } from "./arbitraries.js";

/** Splits `text` as the reader does, fed as string chunks of the given sizes (whole when none). */
async function split(text: string, sizes: readonly number[] = [], lineFastPath = true): Promise<CsvRecord[]> {
  async function* chunks(): AsyncGenerator<string> {
    if (sizes.length === 0) {
      yield await Promise.resolve(text);
      return;
    }
    for (let at = 0, k = 0; at < text.length; k++) {
      const size = sizes[k % sizes.length] ?? 1;
      yield text.slice(at, at + size);
      at += size;
    }
  }
  const out: CsvRecord[] = [];
  for await (const record of csvRecords(chunks(), { lineFastPath })) out.push(record);
  return out;
}

const quote = (field: string): string => `"${field.replaceAll('"', '""')}"`;

describe("CSV record splitter", () => {
  it("when any fields are written with RFC 4180 quoting, then splitting gives them back, each at its start line", async () => {
    const recordsArb = fc.array(fc.array(noteArb, { minLength: 1, maxLength: 5 }), {
      minLength: 1,
      maxLength: 6,
    });
    await fc.assert(
      fc.asyncProperty(
        recordsArb,
        eolArb,
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 9 })),
        async (records, eol, quoteAll, sizes) => {
          let text = "";
          let line = 1;
          const expected: CsvRecord[] = [];
          for (const fields of records) {
            // A lone empty unquoted field would be an empty line, which is skipped: quote it.
            const cells = fields.map((f) =>
              quoteAll || /[",\r\n]/.test(f) || fields.length === 1 ? quote(f) : f,
            );
            const row = cells.join(",");
            expected.push({ kind: "record", line, fields });
            text += row + eol;
            line += row.split("\n").length;
          }
          expect(await split(text, sizes)).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("when a CR ends one chunk and the LF starts the next, then it is one line end", async () => {
    expect(await split("a,b\r\nc,d\r\n", [4])).toEqual([
      { kind: "record", line: 1, fields: ["a", "b"] },
      { kind: "record", line: 2, fields: ["c", "d"] },
    ]);
  });

  it.each([[[]], [[1]], [[2]]])(
    "when a CR is not followed by LF (chunks %j), then it is text in its field",
    async (sizes) => {
      expect(await split("a\rb,c\r\n\rd,e\n", sizes)).toEqual([
        { kind: "record", line: 1, fields: ["a\rb", "c"] },
        { kind: "record", line: 2, fields: ["\rd", "e"] },
      ]);
    },
  );

  it("when the text ends with a CR, then the CR ends the last record", async () => {
    expect(await split("a,b\rc,d\r", [1])).toEqual([{ kind: "record", line: 1, fields: ["a", "b\rc", "d"] }]);
  });

  it("when a line holds only an empty quoted field or a comma, then it is a record, not an empty line", async () => {
    expect(await split('""\n,\n\n')).toEqual([
      { kind: "record", line: 1, fields: [""] },
      { kind: "record", line: 2, fields: ["", ""] },
    ]);
  });

  it("when a quoted field breaks its quoting, then that record alone is broken, whatever the chunking", async () => {
    const text = 'a,"b"c,d\r\n"e""",f\r\n"g"\r,h\r\n';
    const expected: CsvRecord[] = [
      { kind: "broken", line: 1, reason: 'has a quote inside a quoted field that is not doubled ("")' },
      { kind: "record", line: 2, fields: ['e"', "f"] },
      { kind: "broken", line: 3, reason: 'has a quote inside a quoted field that is not doubled ("")' },
    ];
    for (const sizes of [[], [1], [2], [3]]) expect(await split(text, sizes)).toEqual(expected);
  });

  it("when whole lines are split natively, then every record is what the character loop gives, whatever the text and chunking", async () => {
    // Text made of the characters that matter to CSV, so quotes, CRs and empty lines meet in every way.
    const textArb = fc
      .array(fc.constantFrom("a", "é", ",", '"', "\r", "\n", "\r\n", "", " "), { maxLength: 60 })
      .map((parts) => parts.join(""));
    await fc.assert(
      fc.asyncProperty(textArb, fc.array(fc.integer({ min: 1, max: 9 })), async (text, sizes) => {
        expect(await split(text, sizes, true)).toEqual(await split(text, sizes, false));
      }),
      { numRuns: 2000 },
    );
  });

  it("when a line without quotes is longer than the record limit, then it is broken on the fast path too", async () => {
    const long = "x".repeat(MAX_CSV_RECORD_CHARS);
    const text = `a,b\n${long}\nc,d\n`;
    const expected = await split(text, [], false);
    expect(expected.map((r) => r.kind)).toEqual(["record", "broken", "record"]);
    expect(await split(text)).toEqual(expected);
  });
});
