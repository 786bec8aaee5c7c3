import { describe, expect, it } from "vitest";
import { MAX_JSON_KEY_CHARS } from "../../src/ingest/readers/json-scanner.js";
import { fileErrorOf, outline, readAll, record } from "./read-helpers.js";

/** 16 KiB pieces, as drop files are read from disk. */
const FILE_CHUNKS = [16 * 1024];

/** A top-level object whose third line opens with a key of `length` characters, then the invoices. */
function withKey(length: number): string {
  return `{\n  "meta": 1,\n  "${"k".repeat(length)}": 1,\n  "invoices": [${JSON.stringify(record("INV-1"))}]\n}`;
}

describe("JSON reader, long keys and values across chunks", () => {
  it.each([[[]], [FILE_CHUNKS]])(
    "when a top-level key passes the limit (chunks %j), then the file is refused at the key's line and column",
    async (sizes) => {
      const { error } = fileErrorOf(await readAll(withKey(MAX_JSON_KEY_CHARS + 1), "json", sizes));
      expect(error.code).toBe("FILE_UNREADABLE");
      expect(error.problem).toContain(`key of the top-level object is longer than ${MAX_JSON_KEY_CHARS}`);
      expect(error.position).toEqual({ line: 3, column: 3 });
      expect(error.message).toMatch(/^drop\.file \(line 3, column 3\): .*Fix the file and drop it again\.$/);
    },
  );

  it("when a top-level key is exactly as long as the limit, then the invoices after it are read", async () => {
    expect(outline(await readAll(withKey(MAX_JSON_KEY_CHARS), "json", FILE_CHUNKS))).toEqual(["valid@1"]);
  });

  // A value that spans chunks is joined at its end: an error inside it is still placed by its own lines.
  it.each([[[]], [[1]], [[7]], [[3, 1, 5]]])(
    "when a broken element spans chunks and lines (chunks %j), then the file-error names the line and column of the fault",
    async (sizes) => {
      const text = `[\n  ${JSON.stringify(record("INV-1"))},\n  {"external_id": "INV-2",\n   "note": [1,\n\n     2 3]}\n]`;
      const items = await readAll(text, "json", sizes);
      expect(outline(items)).toEqual(["valid@1", "file-error"]);
      expect(fileErrorOf(items).error.position).toEqual({ line: 6, column: 8 });
    },
  );
});
