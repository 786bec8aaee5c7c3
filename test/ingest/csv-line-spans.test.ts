import { describe, expect, it } from "vitest";
import { rowLines } from "../../src/ingest/raw-item.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import { csvRecords } from "../../src/ingest/readers/csv-records.js";
import { HEADER, outline, readAll, rejectionAt, row } from "./read-helpers.js";

/** Rows `from`..`to` (their line numbers) as plain valid rows. */
function rows(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => row(`INV-${from + i}`));
}

/** How many rows the items count for, as the summary counts them. */
function counted(items: readonly ReadItem[]): number {
  return items.reduce(
    (sum, item) => sum + (item.kind === "rejected" ? rowLines(item) : "line" in item ? 1 : 0),
    0,
  );
}

interface Case {
  readonly name: string;
  /** The file's lines, header first (line 1). */
  readonly lines: readonly string[];
  /** The rejected record: its first line, and what its reason says. */
  readonly rejectedAt: number;
  readonly reason: string;
  /** The line of the row read right after it, if any. */
  readonly nextAt?: number;
}

/** Broken quoting as it comes: each case's rejected record names its span, and its rows add up to the lines. */
const CORPUS: readonly Case[] = [
  {
    name: "a stray quote on line 3, closed by a quoted field on line 51",
    lines: [
      HEADER,
      row("INV-2"),
      `INV-3,"EUR,DE,eu-10y`,
      ...rows(4, 50),
      `INV-51,EUR,DE,"eu-10y"`,
      row("INV-52"),
    ],
    rejectedAt: 3,
    reason:
      "lines 3–51: one record of 49 lines: a quote opened on line 3 is never closed before line 51; every line " +
      "between is read as one field (a stray quote on line 3?)",
    nextAt: 52,
  },
  {
    name: "a quote opened on line 3 and never closed",
    lines: [HEADER, row("INV-2"), `INV-3,"EUR,DE,eu-10y`, ...rows(4, 100)],
    rejectedAt: 3,
    reason:
      "lines 3–100: one record of 98 lines: a quote opened on line 3 is never closed before the end of the " +
      "file; every opening quote needs a closing quote",
  },
  {
    name: "two stray quotes that pair up into a record of the wrong width",
    lines: [HEADER, row("INV-2"), `INV-3,"EUR,DE,eu-10y`, `INV-4,EUR,DE,eu-10y"`, row("INV-5")],
    rejectedAt: 3,
    reason:
      "lines 3–4: one record of 2 lines: has 2 field(s) but the header has 4; check for an unquoted comma or a " +
      "missing value",
    nextAt: 5,
  },
  {
    name: "a stray quote opening the first field on line 3, closed just before a delimiter on line 51",
    lines: [
      HEADER,
      row("INV-2"),
      `"INV-3,EUR,DE,eu-10y`,
      ...rows(4, 50),
      `INV-51",EUR,DE,eu-10y`,
      row("INV-52"),
    ],
    rejectedAt: 3,
    reason:
      "lines 3–51: one record of 49 lines: a quote opened on line 3 is closed on line 51; every line between " +
      "is read as one field (a stray quote on line 3?)",
    nextAt: 52,
  },
  {
    name: "a stray quote in the second field on line 3, closed just before a delimiter on line 6",
    lines: [
      HEADER,
      row("INV-2"),
      `INV-3,"EUR,DE,eu-10y`,
      ...rows(4, 5),
      `INV-6,EUR",DE,eu-10y`,
      row("INV-7"),
    ],
    rejectedAt: 3,
    reason:
      "lines 3–6: one record of 4 lines: a quote opened on line 3 is closed on line 6; every line between " +
      "is read as one field (a stray quote on line 3?)",
    nextAt: 7,
  },
  {
    name: "a quote opened on a later line of a record whose first field holds a line break",
    lines: [HEADER, `"INV-2`, `part two",EUR,DE,"eu-10y`, ...rows(4, 9)],
    rejectedAt: 2,
    reason:
      "lines 2–9: one record of 8 lines: a quote opened on line 3 is never closed before the end of the file; " +
      "every opening quote needs a closing quote",
  },
];

describe("a CSV record that broken quoting carries over several lines", () => {
  for (const sample of CORPUS)
    for (const [ending, eol] of [
      ["LF", "\n"],
      ["CRLF", "\r\n"],
    ] as const)
      it(`when ${sample.name} (${ending}), then the rejected record names its span and the rows add up to the file's lines`, async () => {
        const text = sample.lines.join(eol) + eol;
        for (const sizes of [[], [1], [7, 3]]) {
          const items = await readAll(text, "csv", sizes);
          expect(rejectionAt(items, sample.rejectedAt).errors[0]).toEqual({
            field: "(row)",
            reason: sample.reason,
          });
          if (sample.nextAt !== undefined) expect(outline(items)).toContain(`valid@${sample.nextAt}`);
          // Every data line is counted once: the header is line 1 and there are no empty lines.
          expect(counted(items)).toBe(sample.lines.length - 1);
        }
      });

  it("when a quoted field holds line breaks and the record splits, then it is one row whose span is its lines", async () => {
    const records = [];
    for await (const record of csvRecords(toChunks(`a,"b\nc\nd",e\nf,g,h\n`))) records.push(record);
    expect(records).toEqual([
      {
        kind: "record",
        line: 1,
        lastLine: 3,
        fields: ["a", "b\nc\nd", "e"],
        quoted: { opened: 1, closed: 3 },
      },
      { kind: "record", line: 4, fields: ["f", "g", "h"] },
    ]);
  });
});

async function* toChunks(text: string): AsyncGenerator<string> {
  yield await Promise.resolve(text);
}
