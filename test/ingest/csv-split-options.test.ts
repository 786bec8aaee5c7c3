import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvRecords, type CsvRecord, type CsvSplitOptions } from "../../src/ingest/readers/csv-records.js";
import { DELIMITERS } from "../../src/ingest/profiles/source-profile.js";
import { csvEolArb, quotedSpanOf } from "./arbitraries.js";

async function split(text: string, sizes: readonly number[], options: CsvSplitOptions): Promise<CsvRecord[]> {
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
  for await (const record of csvRecords(chunks(), options)) out.push(record);
  return out;
}

const delimiterArb = fc.constantFrom(...DELIMITERS);
const quoteArb = fc.constantFrom('"', "'");
const sizesArb = fc.array(fc.integer({ min: 1, max: 9 }));

describe("CSV record splitter with a delimiter, a quote and a first line", () => {
  it("when fields are written with any delimiter and quote, then splitting with them gives the fields back, each at its start line", async () => {
    const fieldArb = fc.string({
      unit: fc.constantFrom("a", " ", ",", ";", "\t", "|", '"', "'", "\n", "é"),
      maxLength: 8,
    });
    const recordsArb = fc.array(fc.array(fieldArb, { minLength: 1, maxLength: 5 }), {
      minLength: 1,
      maxLength: 6,
    });
    await fc.assert(
      fc.asyncProperty(
        recordsArb,
        delimiterArb,
        quoteArb,
        csvEolArb,
        fc.integer({ min: 1, max: 50 }),
        sizesArb,
        async (records, delimiter, quote, eol, firstLine, sizes) => {
          let text = "";
          let line = firstLine;
          const expected: CsvRecord[] = [];
          for (const fields of records) {
            const cells = fields.map((f) =>
              f.includes(delimiter) || f.includes(quote) || f.includes("\n") || fields.length === 1
                ? `${quote}${f.replaceAll(quote, quote + quote)}${quote}`
                : f,
            );
            const row = cells.join(delimiter);
            const breaks = row.split("\n").length - 1;
            expected.push({
              kind: "record",
              line,
              ...(breaks > 0 ? { lastLine: line + breaks } : {}),
              fields,
              ...quotedSpanOf(cells, delimiter, line),
            });
            text += row + eol;
            line += breaks + 1;
          }
          expect(await split(text, sizes, { delimiter, quote, firstLine })).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("when whole lines are split natively with any delimiter and quote, then records are what the character loop gives", async () => {
    const textArb = fc
      .array(fc.constantFrom("a", "é", ",", ";", "\t", "|", '"', "'", "\r", "\n", "\r\n", ""), {
        maxLength: 60,
      })
      .map((parts) => parts.join(""));
    await fc.assert(
      fc.asyncProperty(textArb, delimiterArb, quoteArb, sizesArb, async (text, delimiter, quote, sizes) => {
        const fast = await split(text, sizes, { delimiter, quote, lineFastPath: true });
        expect(fast).toEqual(await split(text, sizes, { delimiter, quote, lineFastPath: false }));
      }),
      { numRuns: 2000 },
    );
  });

  it("when another quote is set, then a quote inside it that is not doubled is named with it", async () => {
    expect(await split("'a'b;c\n", [], { delimiter: ";", quote: "'" })).toEqual([
      { kind: "broken", line: 1, reason: "has a quote inside a quoted field that is not doubled ('')" },
    ]);
  });

  it.each([
    [{ delimiter: ";;" }],
    [{ delimiter: "\n" }],
    [{ quote: "\r" }],
    [{ delimiter: "'", quote: "'" }],
  ])(
    "when the delimiter or quote is not one usable character (%j), then splitting refuses to start",
    async (options) => {
      await expect(split("a\n", [], options)).rejects.toThrow(/must/);
    },
  );
});
