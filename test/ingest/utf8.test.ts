import { describe, expect, it } from "vitest";
import type { FileFormat } from "../../src/ingest/read-invoice-file.js";
import { bytesOf, fileErrorOf, HEADER, outline, plain, readAll, record, row } from "./read-helpers.js";

const FORMATS: readonly FileFormat[] = ["csv", "ndjson", "json"];
const CHUNKINGS: readonly (readonly number[])[] = [[], [1], [2], [3], [5], [7], [1, 2, 3, 5, 7], [4096]];

/** Two valid records in the given format, then `tail` (bytes) where a third record would start. */
function fileWithTail(format: FileFormat, tail: Uint8Array): Uint8Array {
  const head =
    format === "csv"
      ? `${HEADER}\n${row("Rechnung-Ä-1")}\n${row("請求書-2")}\n`
      : format === "ndjson"
        ? `${JSON.stringify(record("Rechnung-Ä-1"))}\n${JSON.stringify(record("請求書-2"))}\n`
        : `[${JSON.stringify(record("Rechnung-Ä-1"))},\n${JSON.stringify(record("請求書-2"))},\n`;
  return concat(bytesOf(head), tail);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]));
}

const lineCount = (bytes: Uint8Array): number => bytes.filter((b) => b === 0x0a).length + 1;

describe("UTF-8 check", () => {
  describe.each(FORMATS)("in a %s file", (format) => {
    it.each(CHUNKINGS.map((sizes) => [sizes]))(
      "when a Latin-1 byte appears (chunks %j), then a file-error gives its byte offset and line",
      async (sizes) => {
        const bytes = fileWithTail(format, concat(bytesOf("Caf"), Uint8Array.of(0xe9), bytesOf(",EUR\n")));
        const badAt = bytes.indexOf(0xe9);
        const items = await readAll(bytes, format, sizes);
        expect(items.filter((item) => item.kind === "file-error")).toHaveLength(1);
        const { error } = fileErrorOf(items);
        expect(error.code).toBe("FILE_UNREADABLE");
        expect(error.position).toEqual({ line: lineCount(bytes.subarray(0, badAt)), byteOffset: badAt });
        expect(error.problem).toContain("not UTF-8: invalid byte 0xe9");
        expect(error.message).toContain(`byte offset ${badAt}`);
      },
    );

    it.each(CHUNKINGS.map((sizes) => [sizes]))(
      "when the file ends inside a multi-byte character (chunks %j), then the file-error points at its first byte",
      async (sizes) => {
        const emoji = bytesOf("😀");
        const bytes = fileWithTail(format, concat(bytesOf("INV-"), emoji.subarray(0, 3)));
        const items = await readAll(bytes, format, sizes);
        const { error } = fileErrorOf(items);
        expect(error.position).toEqual({ line: lineCount(bytes), byteOffset: bytes.length - 3 });
        expect(error.problem).toContain("ends inside a multi-byte character");
      },
    );
  });

  it.each([
    ["an overlong slash", [0xc0, 0xaf], 0],
    ["a UTF-16 surrogate", [0xed, 0xa0, 0x80], 0],
    ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80], 0],
    ["a lone continuation byte", [0x80], 0],
    ["a lead byte followed by ASCII", [0xc3, 0x41], 0],
    ["0xff as the last byte", [0xff], 0],
    ["a valid é then 0xfe", [0xc3, 0xa9, 0xfe], 2],
  ])(
    "when the bytes hold %s, then every chunking gives the same file-error at the exact offset",
    async (_name, bad, into) => {
      const bytes = fileWithTail("ndjson", Uint8Array.from(bad));
      const expected = bytes.length - bad.length + into;
      for (const sizes of CHUNKINGS) {
        const { error } = fileErrorOf(await readAll(bytes, "ndjson", sizes));
        expect(error.position).toEqual({ line: 3, byteOffset: expected });
        expect(error.problem).toContain("not UTF-8");
      }
    },
  );

  it("when the bad byte comes after some records, then every chunking yields the same records before the error", async () => {
    const bytes = fileWithTail(
      "csv",
      concat(bytesOf(`${row("INV-3")}\nINV-4,`), Uint8Array.of(0xa3), bytesOf("\n")),
    );
    const whole = plain(await readAll(bytes, "csv"));
    expect(outline(await readAll(bytes, "csv"))).toEqual(["valid@2", "valid@3", "valid@4", "file-error"]);
    for (const sizes of CHUNKINGS) expect(plain(await readAll(bytes, "csv", sizes))).toEqual(whole);
  });

  it("when multi-byte characters are split at every possible place, then the file reads as when whole", async () => {
    const bytes = bytesOf(`${HEADER}\n${row("Ä€😀請求書-ß")}\n${row("𝄞-Ω")}\n`);
    const whole = await readAll(bytes, "csv");
    expect(outline(whole)).toEqual(["valid@2", "valid@3"]);
    for (const sizes of CHUNKINGS) expect(await readAll(bytes, "csv", sizes)).toEqual(whole);
  });

  it("when the BOM is counted, then byte offsets are offsets in the file as it is on disk", async () => {
    const bytes = concat(bytesOf(`\uFEFF${HEADER}\n`), Uint8Array.of(0x92));
    for (const sizes of [[], [1], [2]]) {
      expect(fileErrorOf(await readAll(bytes, "csv", sizes)).error.position.byteOffset).toBe(
        bytes.length - 1,
      );
    }
  });

  it("when a BOM appears after the start, then it is text, not stripped", async () => {
    const items = await readAll(
      `${JSON.stringify(record("INV-1"))}\n\uFEFF${JSON.stringify(record("INV-2"))}\n`,
      "ndjson",
    );
    expect(outline(items)).toEqual(["valid@1", "rejected@2"]);
  });
});
