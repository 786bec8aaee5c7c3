import { describe, expect, it } from "vitest";
import { MAX_CSV_RECORD_CHARS } from "../../src/ingest/readers/csv-records.js";
import {
  fileErrorOf,
  HEADER,
  keyOf,
  outline,
  readAll,
  rejectionAt,
  row,
  UUID,
  validAt,
} from "./read-helpers.js";

const csv = (...lines: string[]): string => lines.join("\n") + "\n";
const TINY = [1, 2, 3, 5, 7];

describe("CSV reader", () => {
  it("when rows are valid, then each is valid with its key and the physical line it is on (header = 1)", async () => {
    const items = await readAll(csv(HEADER, row("INV-1"), row("INV-2", "usd", "us", "us-east-7y")), "csv");
    expect(outline(items)).toEqual(["valid@2", "valid@3"]);
    const second = validAt(items, 3);
    expect(second.key).toMatch(UUID);
    expect(second.key).toBe(
      keyOf({
        external_id: "INV-2",
        currency: "USD",
        destination_country: "US",
        archive_policy: "us-east-7y",
      }),
    );
    expect(second.invoice).toEqual({
      currency: "USD",
      document_type: "invoice",
      external_id: "INV-2",
      routing: { archive_policy: "us-east-7y", destination_country: "US" },
      schema_version: "2026-10-16",
    });
  });

  it.each([[[]], [TINY]])(
    "when the file starts with a UTF-8 BOM (chunks %j), then the first column is still external_id",
    async (sizes) => {
      const items = await readAll(`\uFEFF${csv(HEADER, row("INV-1"))}`, "csv", sizes);
      expect(outline(items)).toEqual(["valid@2"]);
      expect(validAt(items, 2).invoice.external_id).toBe("INV-1");
    },
  );

  it.each([
    ["CRLF", "\r\n", []],
    ["CRLF", "\r\n", TINY],
    ["CRLF", "\r\n", [1]],
    ["CR", "\r", []],
    ["CR", "\r", TINY],
    ["CR", "\r", [1]],
  ] as const)(
    "when lines end with %s (%j, chunks %j), then rows read as with LF and no value keeps a CR",
    async (_name, eol, sizes) => {
      const lf = csv(HEADER, row("INV-1"), row("INV-2"));
      const items = await readAll(lf.replaceAll("\n", eol), "csv", sizes);
      expect(items).toEqual(await readAll(lf, "csv"));
      expect(validAt(items, 3).invoice.routing.archive_policy).toBe("eu-10y");
    },
  );

  it.each([[[]], [TINY], [[1]]])(
    "when a file mixes CRLF, LF and bare CR line ends (chunks %j), then every row is read on its own line",
    async (sizes) => {
      const text = `${HEADER}\r\n${row("INV-1")}\n${row("INV-2")}\r${row("INV-3")}\r\n\r${row("INV-4")}\n`;
      const items = await readAll(text, "csv", sizes);
      expect(outline(items)).toEqual(["valid@2", "valid@3", "valid@4", "valid@6"]);
    },
  );

  it("when quoted fields hold commas, doubled quotes and line breaks, then the fields keep them (RFC 4180)", async () => {
    const text = csv(
      `${HEADER},note`,
      `"INV, ""A""",EUR,DE,eu-10y,"two`,
      `lines, ""quoted"""`,
      row("INV-2") + ",x",
    );
    const items = await readAll(text, "csv");
    expect(outline(items)).toEqual(["valid@2", "valid@4", "unknown-fields"]);
    expect(validAt(items, 2).invoice.external_id).toBe('INV, "A"');
  });

  it("when a quote appears inside an unquoted field, then it is kept as text and the row is read", async () => {
    const items = await readAll(csv(HEADER, row('INV-5"-A'), row("INV-6")), "csv");
    expect(outline(items)).toEqual(["valid@2", "valid@3"]);
    expect(validAt(items, 2).invoice.external_id).toBe('INV-5"-A');
  });

  it("when header names differ in case and padding or use the routing. prefix, then they are matched", async () => {
    const header = " External_ID ,CURRENCY, Routing.Destination_Country,routing.ARCHIVE_POLICY ";
    const items = await readAll(csv(header, row("INV-1")), "csv");
    expect(outline(items)).toEqual(["valid@2"]);
    expect(validAt(items, 2).key).toBe(
      keyOf({ external_id: "INV-1", currency: "EUR", destination_country: "DE", archive_policy: "eu-10y" }),
    );
  });

  it("when the columns come in another order, then each value fills its own field", async () => {
    const items = await readAll(
      csv("archive_policy,destination_country,external_id,currency", "us-7y,us,INV-1,usd"),
      "csv",
    );
    expect(validAt(items, 2).invoice).toMatchObject({
      external_id: "INV-1",
      currency: "USD",
      routing: { destination_country: "US", archive_policy: "us-7y" },
    });
  });

  it("when optional schema_version and document_type columns are blank, then the defaults apply; another value is rejected", async () => {
    const text = csv(
      `${HEADER},schema_version,document_type`,
      `${row("INV-1")},,`,
      `${row("INV-2")},2025-01-01,`,
      `${row("INV-3")},,credit_note`,
    );
    const items = await readAll(text, "csv");
    expect(outline(items)).toEqual(["valid@2", "rejected@3", "rejected@4"]);
    expect(rejectionAt(items, 3).errors.map((e) => e.field)).toEqual(["schema_version"]);
    expect(rejectionAt(items, 4).errors.map((e) => e.field)).toEqual(["document_type"]);
  });

  it("when required columns are missing, then the whole file is rejected with one message naming each of them", async () => {
    const items = await readAll(csv("External_Id,currency,notes", "INV-1,EUR,x", "INV-2,EUR,y"), "csv");
    expect(items).toHaveLength(1);
    const { error } = fileErrorOf(items);
    expect(error.code).toBe("FILE_UNREADABLE");
    expect(error.position.line).toBe(1);
    expect(error.problem).toContain("destination_country");
    expect(error.problem).toContain("archive_policy");
    expect(error.problem).not.toContain("currency");
    expect(error.problem).not.toContain("external_id");
    expect(error.message).toContain("drop.file");
  });

  it("when a row has too few or too many fields, then that row alone is rejected and the next goes on", async () => {
    const items = await readAll(csv(HEADER, "INV-1,EUR,DE", row("INV-2") + ",extra", row("INV-3")), "csv");
    expect(outline(items)).toEqual(["rejected@2", "rejected@3", "valid@4"]);
    expect(rejectionAt(items, 2).errors[0]?.reason).toContain("has 3 field(s) but the header has 4");
    expect(rejectionAt(items, 3).errors[0]?.reason).toContain("has 5 field(s) but the header has 4");
  });

  it("when a value is invalid, then the row is rejected naming the field and value, and the next row goes on", async () => {
    const items = await readAll(csv(HEADER, row("INV-1", "EURO"), row("INV-2")), "csv");
    expect(outline(items)).toEqual(["rejected@2", "valid@3"]);
    const [error, ...more] = rejectionAt(items, 2).errors;
    expect(more).toEqual([]);
    expect(error).toMatchObject({ field: "currency", value: "EURO" });
    expect(error?.reason).toContain("ISO 4217");
  });

  it("when one field is given in two columns with different values, then the row is rejected", async () => {
    const items = await readAll(
      csv(`${HEADER},routing.archive_policy`, `${row("INV-1")},us-1y`, `${row("INV-2")},eu-10y`),
      "csv",
    );
    expect(outline(items)).toEqual(["rejected@2", "valid@3"]);
  });

  const MULTILINE = [
    `${HEADER},note`,
    `${row("INV-1")},"first`,
    `second"`,
    `${row("INV-2")},plain`,
    ``,
    `${row("INV-3")},"x`,
    ``,
    `y"`,
    `${row("INV-4")},`,
    `${row("INV-5")},"""quoted""`,
    `"`,
    ``,
    ``,
    `${row("INV-6")},last`,
  ];

  it.each([
    ["LF", "\n", []],
    ["CRLF", "\r\n", []],
    ["CR", "\r", []],
    ["LF", "\n", TINY],
    ["CRLF", "\r\n", TINY],
    ["CR", "\r", TINY],
  ] as const)(
    "when a %s file has multi-line quoted fields and blank lines (%j, chunks %j), then line is where each record starts",
    async (_name, eol, sizes) => {
      const items = await readAll(MULTILINE.join(eol), "csv", sizes);
      expect(outline(items)).toEqual([
        "valid@2",
        "valid@4",
        "valid@6",
        "valid@9",
        "valid@10",
        "valid@14",
        "unknown-fields",
      ]);
    },
  );

  it("when blank lines come before the header, then lines still count from the top of the file", async () => {
    const items = await readAll(`\n\r\n\r${csv(HEADER, row("INV-1"))}`, "csv");
    expect(outline(items)).toEqual(["valid@5"]);
  });

  it("when the last row has no line end, then it is read", async () => {
    const items = await readAll(`${HEADER}\r\n${row("INV-1")}\r\n${row("INV-2")}`, "csv");
    expect(outline(items)).toEqual(["valid@2", "valid@3"]);
  });

  it("when the file has unknown columns, then they are ignored and named once, after the records", async () => {
    const items = await readAll(
      csv(`${HEADER}, Notes ,cost_centre`, `${row("INV-1")},a,b`, `${row("INV-2")},c,d`),
      "csv",
    );
    expect(outline(items)).toEqual(["valid@2", "valid@3", "unknown-fields"]);
    const last = items.at(-1);
    expect(last?.kind === "unknown-fields" ? last.names.map((n) => n.trim()) : []).toEqual([
      "Notes",
      "cost_centre",
    ]);
    expect(validAt(items, 2).key).toBe(
      keyOf({ external_id: "INV-1", currency: "EUR", destination_country: "DE", archive_policy: "eu-10y" }),
    );
  });

  it("when a quoted field is never closed, then that record is rejected at the line it starts and earlier rows stay", async () => {
    const items = await readAll(
      csv(HEADER, row("INV-1"), "", "", `"INV-2,EUR,DE,eu-10y`, row("INV-3")),
      "csv",
    );
    expect(outline(items)).toEqual(["valid@2", "rejected@5"]);
    expect(rejectionAt(items, 5).errors[0]?.reason).toContain("never closed");
  });

  it("when text follows a closing quote, then that row is rejected and the next row goes on", async () => {
    const items = await readAll(csv(HEADER, `"INV-1"x,EUR,DE,eu-10y`, row("INV-2")), "csv");
    expect(outline(items)).toEqual(["rejected@2", "valid@3"]);
    expect(rejectionAt(items, 2).errors[0]?.reason).toContain('not doubled ("")');
  });

  it.each([
    ["unquoted", "x".repeat(MAX_CSV_RECORD_CHARS + 10), 0],
    [
      "quoted, over many lines",
      `"${"x\n".repeat(MAX_CSV_RECORD_CHARS / 2 + 10)}"`,
      MAX_CSV_RECORD_CHARS / 2 + 10,
    ],
    ["made of empty fields", ",".repeat(MAX_CSV_RECORD_CHARS + 10), 0],
  ])(
    "when a record (%s) is longer than the limit, then it alone is rejected and the rows after it are read",
    async (_name, note, feeds) => {
      const text = csv(
        `${HEADER},note`,
        `${row("INV-1")},a`,
        `${row("INV-2")},${note}`,
        `${row("INV-3")},b`,
        `${row("INV-4")},c`,
      );
      for (const sizes of [[], [65_536]]) {
        const items = await readAll(text, "csv", sizes);
        expect(outline(items)).toEqual([
          "valid@2",
          "rejected@3",
          `valid@${4 + feeds}`,
          `valid@${5 + feeds}`,
          "unknown-fields",
        ]);
        expect(rejectionAt(items, 3).errors[0]?.reason).toContain(`longer than ${MAX_CSV_RECORD_CHARS}`);
      }
    },
  );

  it("when the header row itself cannot be split into fields, then the file is rejected at its line", async () => {
    const { error } = fileErrorOf(await readAll(`\n"external_id,currency\n`, "csv"));
    expect(error.position.line).toBe(2);
    expect(error.problem).toContain("header row");
  });

  it.each(["", "\n\n", "\r\n", "\uFEFF"])(
    "when the file is empty or blank (%j), then it is rejected as empty",
    async (text) => {
      const items = await readAll(text, "csv");
      expect(items).toHaveLength(1);
      expect(fileErrorOf(items).error.problem).toContain("empty");
    },
  );

  it("when the file has only a header, then it yields no records", async () => {
    expect(await readAll(csv(HEADER), "csv")).toEqual([]);
  });

  it("when a field holds multi-byte characters split across tiny chunks, then it reads as when whole", async () => {
    const text = csv(HEADER, row("Rechnung-Ä-ß-請求書-😀"), "", row("INV-2"));
    const items = await readAll(text, "csv", [1]);
    expect(items).toEqual(await readAll(text, "csv"));
    expect(validAt(items, 2).invoice.external_id).toBe("Rechnung-Ä-ß-請求書-😀");
    expect(outline(items)).toEqual(["valid@2", "valid@4"]);
  });
});
