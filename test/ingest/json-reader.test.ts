import { describe, expect, it } from "vitest";
import { MAX_JSON_ELEMENT_CHARS } from "../../src/ingest/readers/json-scanner.js";
import { fileErrorOf, keyOf, outline, readAll, record, rejectionAt, validAt } from "./read-helpers.js";

const TINY = [1, 2, 3, 5, 7];
const json = (value: unknown): string => JSON.stringify(value, null, 2);

describe("JSON reader", () => {
  it.each([[[]], [TINY]])(
    "when the file is a top-level array (chunks %j), then line is the 1-based element index",
    async (sizes) => {
      const items = await readAll(json([record("INV-1"), record("INV-2"), record("INV-3")]), "json", sizes);
      expect(outline(items)).toEqual(["valid@1", "valid@2", "valid@3"]);
      expect(validAt(items, 2).key).toBe(keyOf(record("INV-2") as Record<string, unknown>));
    },
  );

  it.each([[[]], [TINY]])(
    'when the file is {"invoices": [...]} among other keys (chunks %j), then the invoices are read',
    async (sizes) => {
      const text = `{"meta": {"note": "a ] } [ { \\" b"}, "count": 2,\n "invoices": [${JSON.stringify(record("INV-1"))},\n${JSON.stringify(record("INV-2"))}], "tail": [1, {"x": null}]}`;
      expect(outline(await readAll(text, "json", sizes))).toEqual(["valid@1", "valid@2"]);
    },
  );

  it.each(["[]", " [ ] ", '{"invoices": []}', '{"a": 1, "invoices": [ ]}'])(
    "when the invoices array is empty (%s), then no items are yielded",
    async (text) => {
      expect(await readAll(text, "json")).toEqual([]);
    },
  );

  it("when elements are not objects, then each is rejected at its index and the next goes on", async () => {
    const items = await readAll(`[1, "INV-1", null, [], ${JSON.stringify(record("INV-5"))}, true]`, "json");
    expect(outline(items)).toEqual([
      "rejected@1",
      "rejected@2",
      "rejected@3",
      "rejected@4",
      "valid@5",
      "rejected@6",
    ]);
    expect(rejectionAt(items, 2).errors).toEqual([
      { field: "(element)", value: "INV-1", reason: "must be a JSON object" },
    ]);
  });

  it("when strings hold brackets, braces, escaped quotes and backslashes, then elements are cut correctly", async () => {
    const tricky = ['A]},{"x": [', 'B\\"}]', "C\\", "D\u2028E 😀"];
    const text = json(tricky.map((id) => record(id)));
    for (const sizes of [[], TINY, [1]]) {
      const items = await readAll(text, "json", sizes);
      expect(outline(items)).toEqual(["valid@1", "valid@2", "valid@3", "valid@4"]);
      expect(items.map((item) => (item.kind === "valid" ? item.invoice.external_id : ""))).toEqual(tricky);
    }
  });

  it("when records carry unknown fields, then they are ignored and named once, after the records", async () => {
    const items = await readAll(
      json([
        { ...record("INV-1"), memo: 1 },
        { ...record("INV-2"), memo: 2 },
      ]),
      "json",
    );
    expect(outline(items)).toEqual(["valid@1", "valid@2", "unknown-fields"]);
    expect(items.at(-1)).toEqual({ kind: "unknown-fields", names: ["memo"] });
  });

  it.each([
    ["hello", 1, 1],
    ["INV-1,EUR,DE,eu-10y\n", 1, 1],
    ["\n\n  {]", 3, 4],
    ["42", 1, 1],
    ['"invoices"', 1, 1],
  ])(
    "when the file is not JSON at all (%j), then a file-error gives line %i, column %i",
    async (text, line, column) => {
      const items = await readAll(text, "json");
      expect(items).toHaveLength(1);
      expect(fileErrorOf(items).error.position).toEqual({ line, column });
    },
  );

  it.each([
    '[{"external_id": "INV-1"},\n  {"external_id": "IN',
    '[\n{"a": 1}',
    '{"invoices": [',
    "[",
    "[[[[",
    '[\n"abc',
  ])(
    "when the JSON is truncated (%j), then the last item is a file-error at the end of the text",
    async (text) => {
      const lines = text.split("\n");
      const end = { line: lines.length, column: (lines.at(-1) ?? "").length + 1 };
      for (const sizes of [[], TINY]) {
        const error = fileErrorOf(await readAll(text, "json", sizes)).error;
        expect(error.problem).toContain("ends early");
        expect(error.position).toEqual(end);
      }
    },
  );

  it.each([
    ["[]\n\n  x", 3, 3],
    ['[{"external_id": "INV-1"}] [', 1, 28],
    ['{"invoices": []}}', 1, 17],
    ["[]]", 1, 3],
  ])(
    "when garbage follows the document (%j), then a file-error names its line %i and column %i",
    async (text, line, column) => {
      for (const sizes of [[], TINY]) {
        const error = fileErrorOf(await readAll(text, "json", sizes)).error;
        expect(error.problem).toContain("after the end");
        expect(error.position).toEqual({ line, column });
      }
    },
  );

  it("when an element is not valid JSON, then the records before it are kept and a file-error ends the items", async () => {
    const text = `[\n${JSON.stringify(record("INV-1"))},\n  {"external_id": tru}\n]`;
    const items = await readAll(text, "json");
    expect(outline(items)).toEqual(["valid@1", "file-error"]);
    expect(fileErrorOf(items).error.position.line).toBe(3);
  });

  it.each([
    ['[{"a": 1} {"b": 2}]', "between invoices"],
    ['{"invoices": {}}', "must be an array"],
    ['{"invoices": [], "invoices": []}', "appears twice"],
    ['{"invoices" []}', "':'"],
    ["{invoices: []}", "quoted key"],
  ])("when the document is malformed (%j), then it is a file-error saying %j", async (text, words) => {
    const items = await readAll(text, "json");
    expect(fileErrorOf(items).error.problem).toContain(words);
  });

  it.each([[[]], [TINY], [[1]]])(
    "when the file is empty or only white space (chunks %j), then the file-error has a real line and column",
    async (sizes) => {
      for (const text of ["", "\n\n  \n"]) {
        const { error } = fileErrorOf(await readAll(text, "json", sizes));
        expect(error.problem).toContain("empty");
        expect(error.position.line).toBeGreaterThanOrEqual(1);
        expect(error.position.column).toBeGreaterThanOrEqual(1);
      }
    },
  );

  it.each([[[]], [TINY], [[1]]])(
    'when the top-level object has no "invoices" (chunks %j), then the file-error points at the object',
    async (sizes) => {
      const { error } = fileErrorOf(await readAll('\n  {\n"a":\n1\n}\n', "json", sizes));
      expect(error.problem).toContain('no "invoices"');
      expect(error.position).toEqual({ line: 2, column: 3 });
    },
  );

  it.each([10_000, 100_000])(
    "when elements nest %i levels deep, then each is rejected alone and the records after it are read",
    async (depth) => {
      const deepArray = `${"[".repeat(depth)}${"]".repeat(depth)}`;
      const deepObject = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      const text = `[${deepArray}, {"external_id": ${deepArray}, "currency": "EUR"}, ${deepObject}, ${JSON.stringify(record("INV-4"))}]`;
      for (const sizes of [[], [4096]]) {
        const items = await readAll(text, "json", sizes);
        expect(outline(items)).toEqual([
          "rejected@1",
          "rejected@2",
          "rejected@3",
          "valid@4",
          "unknown-fields",
        ]);
      }
    },
  );

  it("when a skipped top-level value nests 10,000 levels deep, then the invoices are still read", async () => {
    const text = `{"meta": ${"[".repeat(10_000)}${"]".repeat(10_000)}, "invoices": [${JSON.stringify(record("INV-1"))}]}`;
    expect(outline(await readAll(text, "json"))).toEqual(["valid@1"]);
  });

  it("when an unclosed array nests 100,000 levels deep, then it is a truncated-file error, not a crash", async () => {
    const { error } = fileErrorOf(await readAll(`[${"[".repeat(100_000)}`, "json"));
    expect(error.problem).toContain("ends early");
  });

  it("when an element is longer than the limit, then it alone is rejected and the next element goes on", async () => {
    const long = JSON.stringify({ ...record("INV-2"), note: "x".repeat(MAX_JSON_ELEMENT_CHARS) });
    const text = `[${JSON.stringify(record("INV-1"))},${long},\n${JSON.stringify(record("INV-3"))}]`;
    for (const sizes of [[], [1 << 20], [65_536]]) {
      const items = await readAll(text, "json", sizes);
      expect(outline(items)).toEqual(["valid@1", "rejected@2", "valid@3"]);
      expect(rejectionAt(items, 2).errors[0]?.reason).toContain(`longer than ${MAX_JSON_ELEMENT_CHARS}`);
    }
  });

  it("when an element is too long and broken after the limit, then the error after it still has its line", async () => {
    const breaks = Math.ceil(MAX_JSON_ELEMENT_CHARS / 5) + 1;
    const long = `{"note": [${'"xx",\n'.repeat(breaks)}1]}`;
    const items = await readAll(`[\n${long},\n\n oops]`, "json", [65_536]);
    expect(outline(items)).toEqual(["rejected@1", "file-error"]);
    expect(fileErrorOf(items).error.position).toEqual({ line: 4 + breaks, column: 2 });
  });

  it("when an element gives external_id twice with different values, then that element alone is rejected naming the field, and the next goes on", async () => {
    const twice =
      '{"external_id": "INV-A", "currency": "EUR", "destination_country": "DE", "archive_policy": "eu-10y", "external_id": "INV-B"}';
    const items = await readAll(`[${twice}, ${JSON.stringify(record("INV-2"))}]`, "json", TINY);
    expect(outline(items)).toEqual(["rejected@1", "valid@2"]);
    expect(rejectionAt(items, 1).errors).toEqual([
      {
        field: "external_id",
        reason: 'is given twice with different values (again as "external_id"); give it once',
      },
    ]);
  });
});
