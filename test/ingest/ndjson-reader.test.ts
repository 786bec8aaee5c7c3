import { describe, expect, it } from "vitest";
import { MAX_NDJSON_LINE_CHARS } from "../../src/ingest/readers/ndjson.js";
import { keyOf, keysOf, outline, readAll, record, rejectionAt, validAt } from "./read-helpers.js";

const lines = (...values: (object | string)[]): string =>
  values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join("\n") + "\n";
const TINY = [1, 2, 3, 5, 7];
const FLAT_KEY = keyOf({
  external_id: "INV-1",
  currency: "EUR",
  destination_country: "DE",
  archive_policy: "eu-10y",
});

describe("NDJSON reader", () => {
  it("when each line is an invoice, then each is valid with the physical line it is on (first line = 1)", async () => {
    const items = await readAll(lines(record("INV-1"), record("INV-2")), "ndjson");
    expect(outline(items)).toEqual(["valid@1", "valid@2"]);
    expect(validAt(items, 1).key).toBe(FLAT_KEY);
  });

  it.each([[[]], [TINY]])(
    "when blank and white-space lines come between records (chunks %j), then they are skipped but counted",
    async (sizes) => {
      const text =
        lines("", record("INV-1"), "   ", "\t", record("INV-2"), "") + "\r\n" + lines(record("INV-3"));
      expect(outline(await readAll(text, "ndjson", sizes))).toEqual(["valid@2", "valid@5", "valid@8"]);
    },
  );

  it("when a line is not valid JSON, then it alone is rejected and the next line goes on", async () => {
    const items = await readAll(
      lines(record("INV-1"), '{"external_id": "INV-2",', record("INV-3")),
      "ndjson",
    );
    expect(outline(items)).toEqual(["valid@1", "rejected@2", "valid@3"]);
    expect(rejectionAt(items, 2).errors[0]).toMatchObject({ field: "(line)" });
    expect(rejectionAt(items, 2).errors[0]?.reason).toContain("not valid JSON");
  });

  it.each(["[1,2]", "42", '"INV-1"', "null", "true"])(
    "when a line is JSON but not an object (%s), then it is rejected and the next goes on",
    async (value) => {
      const items = await readAll(lines(value, record("INV-2")), "ndjson");
      expect(outline(items)).toEqual(["rejected@1", "valid@2"]);
      expect(rejectionAt(items, 1).errors[0]?.reason).toBe("must be a JSON object");
    },
  );

  it.each([[[]], [TINY]])(
    "when lines end with CRLF (chunks %j), then they read as with LF",
    async (sizes) => {
      const lf = lines(record("INV-1"), "", record("INV-2"));
      expect(await readAll(lf.replaceAll("\n", "\r\n"), "ndjson", sizes)).toEqual(
        await readAll(lf, "ndjson"),
      );
    },
  );

  it("when the last line has no line end, then it is read", async () => {
    const items = await readAll(
      `${JSON.stringify(record("INV-1"))}\n${JSON.stringify(record("INV-2"))}`,
      "ndjson",
    );
    expect(outline(items)).toEqual(["valid@1", "valid@2"]);
  });

  it("when the file starts with a BOM, then the first line is still read", async () => {
    const items = await readAll(`\uFEFF${lines(record("INV-1"))}`, "ndjson", [1]);
    expect(outline(items)).toEqual(["valid@1"]);
  });

  it("when records are nested, flat, routing.-dotted or in other case, then they get the same key", async () => {
    const items = await readAll(
      lines(
        record("INV-1"),
        { external_id: "INV-1", currency: "eur", destination_country: "de", archive_policy: "EU-10Y" },
        {
          " External_Id": "INV-1",
          CURRENCY: "EUR",
          "Routing.Destination_Country": "DE",
          "routing.archive_policy": "eu-10y",
        },
        {
          external_id: " INV-1 ",
          currency: "EUR",
          ROUTING: { Destination_Country: "DE", ARCHIVE_POLICY: "eu-10y" },
        },
      ),
      "ndjson",
    );
    expect(outline(items)).toEqual(["valid@1", "duplicate@2", "duplicate@3", "duplicate@4"]);
    expect(keysOf(items)).toEqual([FLAT_KEY, FLAT_KEY, FLAT_KEY, FLAT_KEY]);
  });

  it("when records carry unknown fields, then they are ignored and named once per file, after the records", async () => {
    const items = await readAll(
      lines(
        { ...record("INV-1"), note: "a" },
        { ...record("INV-2"), note: "b", extra: 1 },
        {
          external_id: "INV-3",
          currency: "EUR",
          routing: { destination_country: "DE", archive_policy: "eu-10y", tier: 1 },
        },
      ),
      "ndjson",
    );
    expect(outline(items)).toEqual(["valid@1", "valid@2", "valid@3", "unknown-fields"]);
    expect(items.at(-1)).toEqual({ kind: "unknown-fields", names: ["note", "extra", "routing.tier"] });
  });

  it("when a record has no unknown fields, then no unknown-fields item is given", async () => {
    expect(outline(await readAll(lines(record("INV-1")), "ndjson"))).toEqual(["valid@1"]);
  });

  it("when a line is longer than the limit, then it alone is rejected and the next line goes on", async () => {
    const long = JSON.stringify({ ...record("INV-2"), note: "x".repeat(MAX_NDJSON_LINE_CHARS) });
    for (const sizes of [[], [1 << 20], [65_536]]) {
      const items = await readAll(lines(record("INV-1"), long, record("INV-3")), "ndjson", sizes);
      expect(outline(items)).toEqual(["valid@1", "rejected@2", "valid@3"]);
      expect(rejectionAt(items, 2).errors[0]?.reason).toContain(`longer than ${MAX_NDJSON_LINE_CHARS}`);
    }
  });

  it.each([10_000, 100_000])(
    "when a line nests %i levels deep, then it is rejected alone and the next line goes on",
    async (depth) => {
      const deepArray = `${"[".repeat(depth)}${"]".repeat(depth)}`;
      const deepField = `{"external_id":${deepArray},"currency":"EUR"}`;
      const items = await readAll(lines(deepArray, deepField, record("INV-3")), "ndjson");
      expect(outline(items)).toEqual(["rejected@1", "rejected@2", "valid@3"]);
    },
  );

  it.each([[[]], [TINY]])(
    "when lines end in a CR alone, or in CRLF cut between chunks (chunks %j), then each line is read as the CSV reader reads them",
    async (sizes) => {
      const [a, b, c] = ["INV-1", "INV-2", "INV-3"].map((id) => JSON.stringify(record(id)));
      const items = await readAll(`${a}\r\r${b}\r${c}\r\n`, "ndjson", sizes);
      expect(outline(items)).toEqual(["valid@1", "valid@3", "valid@4"]);
      expect(validAt(items, 3).key).toBe(keyOf(record("INV-2") as Record<string, unknown>));
    },
  );

  it("when a line gives external_id twice with different values, then the line is rejected naming the field, and the same value twice is taken", async () => {
    const twice =
      '{"external_id": "INV-A", "currency": "EUR", "destination_country": "DE", "archive_policy": "eu-10y", "external_id": "INV-B"}';
    const same =
      '{"external_id": "INV-C", "routing": {"destination_country": "DE", "archive_policy": "eu-10y", "archive_policy": "eu-10y"}, "currency": "EUR"}';
    const nested =
      '{"external_id": "INV-D", "currency": "EUR", "routing": {"destination_country": "DE", "archive_policy": "eu-10y", "destination_country": "FR"}}';
    const items = await readAll(lines(twice, same, nested), "ndjson");
    expect(outline(items)).toEqual(["rejected@1", "valid@2", "rejected@3"]);
    expect(rejectionAt(items, 1).errors).toEqual([
      {
        field: "external_id",
        reason: 'is given twice with different values (again as "external_id"); give it once',
      },
    ]);
    expect(rejectionAt(items, 3).errors).toEqual([
      {
        field: "routing.destination_country",
        reason: 'is given twice with different values (again as "routing.destination_country"); give it once',
      },
    ]);
  });
});
