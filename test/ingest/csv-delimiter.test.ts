import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findFileError } from "../../src/ingest/read-invoice-file.js";
import { keysOf, outline, readAll, rejectionAt, validAt, fileErrorOf } from "./read-helpers.js";
import { profileOf, readThrough } from "./profile-helpers.js";

const NAMES = ["external_id", "currency", "destination_country", "archive_policy"];
const ROWS = [
  ["INV-1", "EUR", "DE", "eu-10y"],
  ["INV-2", "USD", "US", "us-east-7y"],
];
const TINY = [1, 2, 3, 5, 7];
const TRIED = '",", ";", tab and "|"';

/** Lines of cells joined with the delimiter, each line ended with LF. */
function csvWith(delimiter: string, lines: readonly (readonly string[])[]): string {
  return lines.map((cells) => cells.join(delimiter)).join("\n") + "\n";
}

describe("CSV delimiter detection", () => {
  it.each([
    [",", []],
    [";", []],
    ["\t", []],
    ["|", []],
    [";", TINY],
    ["\t", [1]],
    ["|", TINY],
  ] as const)(
    "when the header is split by %j (chunks %j), then that delimiter is detected and the rows read as from a comma file",
    async (delimiter, sizes) => {
      const { items, header } = await readThrough(
        csvWith(delimiter, [NAMES, ...ROWS]),
        "csv",
        undefined,
        sizes,
      );
      expect(outline(items)).toEqual(["valid@2", "valid@3"]);
      expect(header).toMatchObject({ delimiter, detected: true, quote: '"', line: 1 });
      expect(items).toEqual(await readAll(csvWith(",", [NAMES, ...ROWS]), "csv"));
    },
  );

  it.each([
    [";", []],
    [";", [1]],
    ["\t", TINY],
    [",", TINY],
  ] as const)(
    "when a file's lines end with CR alone and its header is split by %j (chunks %j), then that delimiter is detected and every row read",
    async (delimiter, sizes) => {
      const text = csvWith(delimiter, [NAMES, ...ROWS]).replaceAll("\n", "\r");
      const { items, header } = await readThrough(text, "csv", undefined, sizes);
      expect(header).toMatchObject({ delimiter, detected: true, line: 1 });
      expect(header?.columns.map((c) => c.name)).toEqual(NAMES);
      expect(outline(items)).toEqual(["valid@2", "valid@3"]);
    },
  );

  it("when every header name and value is quoted, then the delimiter between the quotes is detected", async () => {
    const quoted = (cells: readonly string[]): string[] => cells.map((c) => `"${c}"`);
    const text = csvWith(";", [quoted(NAMES), ...ROWS.map(quoted)]);
    const { items, header } = await readThrough(text, "csv", undefined, TINY);
    expect(header?.delimiter).toBe(";");
    expect(validAt(items, 3).invoice.external_id).toBe("INV-2");
  });

  it.each([
    [",", ['"a;b"', '"c|d\te"']],
    [";", ['"x,y"', '"p|q"']],
    ["|", ['"m,n;o"', '"t\tu"']],
    ["\t", ['"r,s"', '"v;w|z"']],
  ] as const)(
    "when a %j file has quoted header names holding the other delimiters, then its own delimiter is detected",
    async (delimiter, extra) => {
      const text = csvWith(delimiter, [
        [...NAMES, ...extra],
        [...(ROWS[0] ?? []), '"1, 2; 3"', "x"],
      ]);
      const { items, header } = await readThrough(text, "csv", undefined, [3]);
      expect(header?.delimiter).toBe(delimiter);
      expect(outline(items)).toEqual(["valid@2", "unknown-fields"]);
      const unknown = items.at(-1);
      expect(unknown?.kind === "unknown-fields" ? unknown.names : []).toEqual(
        extra.map((name) => name.slice(1, -1)),
      );
    },
  );

  it("when the header names every required column with two delimiters, then the file is rejected naming both and the setting", async () => {
    // Split at ",": the first name is unknown, the last four are the required columns; split at ";" too.
    const header =
      "archive_policy;external_id;currency;destination_country;x,external_id,currency,destination_country,archive_policy";
    const { items } = await readThrough(`${header}\nINV-1;EUR;DE;eu-10y\n`, "csv");
    expect(items).toHaveLength(1);
    const { error } = fileErrorOf(items);
    expect(error.code).toBe("FILE_UNREADABLE");
    expect(error.position.line).toBe(1);
    expect(error.problem).toContain('split at "," and ";"');
    expect(error.problem).toContain(`tried ${TRIED}`);
    expect(error.problem).toContain('"delimiter:"');
    expect(error.problem).toContain("SOURCES_FILE");
    expect(error.problem).toContain('docs/vendor-files.md, "Vendor files"');
  });

  it("when a profile sets the delimiter, then it is used without detection, even for a header that two delimiters split", async () => {
    const header =
      "archive_policy;external_id;currency;destination_country;x,external_id,currency,destination_country,archive_policy";
    const { items, header: seen } = await readThrough(
      `${header}\neu-10y;INV-1;EUR;DE;a,b,c,d,e\n`,
      "csv",
      profileOf({ delimiter: ";" }),
    );
    expect(seen).toMatchObject({ delimiter: ";", detected: false });
    expect(validAt(items, 2).invoice.external_id).toBe("INV-1");
  });

  it("when no delimiter splits the header into the required columns, then the file is rejected naming those tried and the settings", async () => {
    const { items } = await readThrough(
      "Invoice No,Currency,Country,Archive Policy\nINV-1,EUR,DE,eu-10y\n",
      "csv",
    );
    const { error } = fileErrorOf(items);
    expect(error.position.line).toBe(1);
    expect(error.problem).toContain(
      "the header lacks required column(s): external_id, destination_country (or routing.destination_country), archive_policy (or routing.archive_policy)",
    );
    expect(error.problem).toContain(`split at ",", which finds the most of them; tried ${TRIED}`);
    expect(error.problem).toContain('"delimiter:"');
    expect(error.problem).toContain('"columns:"');
    expect(error.problem).toContain("SOURCES_FILE");
  });

  it("when the profile's delimiter does not split the header into the required columns, then the message names that delimiter and profile", async () => {
    const { items } = await readThrough(csvWith(",", [NAMES, ...ROWS]), "csv", profileOf({ delimiter: "|" }));
    expect(fileErrorOf(items).error.problem).toContain(
      `(split at "|", the delimiter sources.yaml, profile 1 ("vendor-*") sets)`,
    );
  });

  it("when a row has a field too many for the header, then the reason names the file's delimiter", async () => {
    const { items } = await readThrough(csvWith(";", [NAMES, ["INV-1", "EUR", "DE", "eu-10y", "x"]]), "csv");
    expect(rejectionAt(items, 2).errors[0]?.reason).toBe(
      'has 5 field(s) but the header has 4; check for an unquoted delimiter (";") or a missing value',
    );
  });

  it("when a source profile sets another quote, then fields are quoted with it and the double quote is text", async () => {
    const text = csvWith(";", [
      ["'external_id'", "'currency'", "destination_country", "archive_policy"],
      ["'INV; ''1'' \"A\"'", "EUR", "DE", "eu-10y"],
      ['"INV-2"', "EUR", "DE", "eu-10y"],
    ]);
    for (const sizes of [[], [1], TINY]) {
      const { items, header } = await readThrough(text, "csv", profileOf({ quote: "'" }), sizes);
      expect(header).toMatchObject({ delimiter: ";", quote: "'" });
      expect(validAt(items, 2).invoice.external_id).toBe(`INV; '1' "A"`);
      expect(validAt(items, 3).invoice.external_id).toBe('"INV-2"');
    }
  });

  it.each([[[]], [[1]]])(
    "when the file is a header alone without a line end (chunks %j), then its delimiter is still detected",
    async (sizes) => {
      const { items, header } = await readThrough(NAMES.join("|"), "csv", undefined, sizes);
      expect(items).toEqual([]);
      expect(header).toMatchObject({ delimiter: "|", line: 1 });
    },
  );

  it("when the file's first pass checks it as a whole, then it uses the profile as reading does", async () => {
    const dir = await mkdtemp(join(tmpdir(), "invoice-relay-delimiter-"));
    try {
      const path = join(dir, "vendor-1.csv");
      await writeFile(
        path,
        csvWith(";", [["Nr", "currency", "destination_country", "archive_policy"], ...ROWS]),
      );
      const options = { format: "csv", displayName: "vendor-1.csv" } as const;
      expect((await findFileError(path, options))?.problem).toContain(
        "lacks required column(s): external_id",
      );
      const profile = profileOf({ columns: { Nr: "external_id" } });
      expect(await findFileError(path, { ...options, profile })).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("when the header row is broken with every delimiter, then the file is rejected for that, at its line", async () => {
    const { error } = fileErrorOf((await readThrough(`\n"external_id,currency\n`, "csv")).items);
    expect(error.position.line).toBe(2);
    expect(error.problem).toContain("the header row has a quoted field that is never closed");
  });
});

describe("CSV header_row", () => {
  // A preamble that would break a record splitter: unbalanced quotes, delimiters, a blank line.
  const PREAMBLE = ['Export "Q3; from SAP', "Rows;, |\t\"'", "", 'note: "unbalanced'];

  it.each([
    ["\n", []],
    ["\r\n", []],
    ["\r", []],
    ["\n", [1]],
    ["\r\n", TINY],
    ["\r\n", [1]],
    ["\r", [1]],
    ["\r", TINY],
  ] as const)(
    "when a preamble with quotes and delimiters precedes the header (line end %j, chunks %j), then it is skipped and lines stay physical",
    async (eol, sizes) => {
      const text = [
        ...PREAMBLE,
        [...NAMES, "note"].join(";"),
        "INV-1;EUR;DE;eu-10y;a",
        'INV-2;EUR;DE;eu-10y;"two;',
        'lines"',
        "INV-3;EUR;Germny;eu-10y;c",
        "",
      ].join(eol);
      const { items, header } = await readThrough(text, "csv", profileOf({ headerRow: 5 }), sizes);
      expect(header).toMatchObject({ delimiter: ";", line: 5 });
      expect(outline(items)).toEqual(["valid@6", "valid@7", "rejected@9", "unknown-fields"]);
      expect(rejectionAt(items, 9).errors[0]).toMatchObject({ field: "routing.destination_country" });
      expect(keysOf(items)).toHaveLength(2);
    },
  );

  it("when header_row is 1, then nothing is skipped", async () => {
    const { items } = await readThrough(csvWith(",", [NAMES, ...ROWS]), "csv", profileOf({ headerRow: 1 }));
    expect(outline(items)).toEqual(["valid@2", "valid@3"]);
  });

  it("when the file ends before header_row, then it is rejected naming the line and the setting", async () => {
    const { items } = await readThrough("one\ntwo\n", "csv", profileOf({ headerRow: 4 }));
    const { error } = fileErrorOf(items);
    expect(error.problem).toContain("ends before line 4");
    expect(error.problem).toContain("header_row");
  });

  it("when only blank lines follow the preamble, then the file is rejected as having no header there", async () => {
    const { items } = await readThrough('pre "amble\n\n\n', "csv", profileOf({ headerRow: 2 }));
    expect(fileErrorOf(items).error.problem).toContain("needs a header row at or after line 2");
  });
});
