import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvRecords, MAX_CSV_RECORD_CHARS, type CsvRecord } from "../../src/ingest/readers/csv-records.js";
import { csvEolsArb, lineEndsIn, noteArb, quotedSpanOf } from "./arbitraries.js";

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
        csvEolsArb,
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 9 })),
        async (records, eols, quoteAll, sizes) => {
          let text = "";
          const expected: CsvRecord[] = [];
          for (const [n, fields] of records.entries()) {
            // A lone empty unquoted field would be an empty line, which is skipped: quote it.
            const cells = fields.map((f) =>
              quoteAll || /[",\r\n]/.test(f) || fields.length === 1 ? quote(f) : f,
            );
            const line = lineEndsIn(text) + 1;
            const breaks = lineEndsIn(cells.join(","));
            // A record whose quoted fields hold line breaks names the last line it holds too.
            expected.push({
              kind: "record",
              line,
              ...(breaks > 0 ? { lastLine: line + breaks } : {}),
              fields,
              ...quotedSpanOf(cells, ",", line),
            });
            text += cells.join(",") + (eols[n % eols.length] ?? "\n");
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
    "when a CR is not followed by LF (chunks %j), then it ends the record and the line, as LF and CRLF do",
    async (sizes) => {
      expect(await split("a\rb,c\r\n\rd,e\n\rf\r", sizes)).toEqual([
        { kind: "record", line: 1, fields: ["a"] },
        { kind: "record", line: 2, fields: ["b", "c"] },
        { kind: "record", line: 4, fields: ["d", "e"] },
        { kind: "record", line: 6, fields: ["f"] },
      ]);
    },
  );

  it.each([[[]], [[1]], [[2]], [[3]]])(
    "when a quoted field holds CR, LF and CRLF (chunks %j), then they are its data and each counts one line",
    async (sizes) => {
      expect(await split('"a\rb\r\nc\nd",e\rf,"\r"\rg,h', sizes)).toEqual([
        {
          kind: "record",
          line: 1,
          lastLine: 4,
          fields: ["a\rb\r\nc\nd", "e"],
          quoted: { opened: 1, closed: 4 },
        },
        { kind: "record", line: 5, lastLine: 6, fields: ["f", "\r"], quoted: { opened: 5, closed: 6 } },
        { kind: "record", line: 7, fields: ["g", "h"] },
      ]);
    },
  );

  it("when a quoted field's CR ends one chunk and its LF starts the next, then they are one line", async () => {
    expect(await split('"a\r\nb",c\nd,e\n', [3])).toEqual([
      { kind: "record", line: 1, lastLine: 2, fields: ["a\r\nb", "c"], quoted: { opened: 1, closed: 2 } },
      { kind: "record", line: 3, fields: ["d", "e"] },
    ]);
  });

  it("when a line holds only an empty quoted field or a comma, then it is a record, not an empty line", async () => {
    expect(await split('""\n,\n\n')).toEqual([
      { kind: "record", line: 1, fields: [""] },
      { kind: "record", line: 2, fields: ["", ""] },
    ]);
  });

  it("when a quoted field breaks its quoting, then that record alone is broken, whatever the chunking", async () => {
    const text = 'a,"b"c,d\r\n"e""",f\r\n"g"x,h\r\n"i"\r,j\r\n';
    const expected: CsvRecord[] = [
      { kind: "broken", line: 1, reason: 'has a quote inside a quoted field that is not doubled ("")' },
      { kind: "record", line: 2, fields: ['e"', "f"] },
      { kind: "broken", line: 3, reason: 'has a quote inside a quoted field that is not doubled ("")' },
      // A CR after a closing quote ends the record, as an LF would.
      { kind: "record", line: 4, fields: ["i"] },
      { kind: "record", line: 5, fields: ["", "j"] },
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
