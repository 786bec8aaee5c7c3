import { describe, expect, it } from "vitest";
import { decodeText, type EncodingChoice } from "../../src/ingest/decode/decode-text.js";
import type { Encoding, SourceProfile } from "../../src/ingest/profiles/source-profile.js";
import { UnreadableFileError } from "../../src/ingest/unreadable-file-error.js";
import { chunked } from "./read-helpers.js";

const CHUNKINGS: readonly (readonly number[])[] = [[], [1], [2], [3], [5], [1, 2, 3, 5, 7], [4096]];

function profile(encoding?: Encoding): SourceProfile {
  return {
    name: 'sources.yaml, profile 1 ("vendor-*.csv")',
    match: "vendor-*.csv",
    ...(encoding === undefined ? {} : { encoding }),
    columns: new Map(),
    defaults: {},
    values: new Map(),
  };
}

interface Decoded {
  readonly text: string;
  readonly choice: EncodingChoice | undefined;
  readonly error: UnreadableFileError | undefined;
}

async function decode(
  bytes: Uint8Array,
  sizes: readonly number[] = [],
  where?: SourceProfile,
): Promise<Decoded> {
  let text = "";
  let choice: EncodingChoice | undefined;
  try {
    for await (const chunk of decodeText("drop.csv", chunked(bytes, sizes), where, (c) => (choice = c))) {
      text += chunk;
    }
  } catch (thrown) {
    if (!(thrown instanceof UnreadableFileError)) throw thrown;
    return { text, choice, error: thrown };
  }
  return { text, choice, error: undefined };
}

const utf16le = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "utf16le"));
const utf16be = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "utf16le").swap16());
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const join = (...parts: (Uint8Array | readonly number[])[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((part) => [...part]));

const TEXT = "external_id\nRechnung-Ä-1 €\n請求書-😀\n";

describe("decodeText", () => {
  describe("without a profile", () => {
    it.each([
      ["a UTF-8 byte order mark", join([0xef, 0xbb, 0xbf], utf8(TEXT)), "utf-8", 3],
      ["a UTF-16 LE byte order mark", join([0xff, 0xfe], utf16le(TEXT)), "utf-16le", 2],
      ["a UTF-16 BE byte order mark", join([0xfe, 0xff], utf16be(TEXT)), "utf-16be", 2],
      ["no byte order mark", utf8(TEXT), "utf-8", 0],
    ])(
      "when the file starts with %s, then it is decoded by it in every chunking and the mark is not text",
      async (_name, bytes, encoding, mark) => {
        for (const sizes of CHUNKINGS) {
          const decoded = await decode(bytes, sizes);
          expect(decoded.error).toBeUndefined();
          expect(decoded.text).toBe(TEXT);
          expect(decoded.choice).toEqual({
            encoding,
            by: mark === 0 ? "default" : "byte-order-mark",
            byteOrderMark: mark,
          });
        }
      },
    );

    it.each([
      ["empty", [], ""],
      ["one byte", [0x41], "A"],
      ["two bytes", [0x41, 0x42], "AB"],
      ["only a UTF-16 LE byte order mark", [0xff, 0xfe], ""],
    ])("when the file is %s, then it decodes without error", async (_name, bytes, text) => {
      for (const sizes of [[], [1]]) {
        const decoded = await decode(Uint8Array.from(bytes), sizes);
        expect(decoded.error).toBeUndefined();
        expect(decoded.text).toBe(text);
      }
    });

    it("when lines end in a CR alone or in CRLF, as the CSV reader takes them, then a bad byte's line counts each once in every chunking", async () => {
      const utf8Bytes = join(utf8("external_id\rINV-1\r\nINV-2\rM"), [0xfc], utf8("ller\r"));
      const lone = join(utf16le("a\rb\r\nc\r"), [0x00, 0xdc], utf16le("d"));
      for (const sizes of CHUNKINGS) {
        expect((await decode(utf8Bytes, sizes)).error?.position, `UTF-8 ${sizes.join()}`).toEqual({
          line: 4,
          byteOffset: 26,
        });
        const bom = join([0xff, 0xfe], lone);
        expect((await decode(bom, sizes)).error?.position, `UTF-16 ${sizes.join()}`).toEqual({
          line: 4,
          byteOffset: 16,
        });
      }
    });

    it("when a Windows-1252 byte appears, then the error names the byte, line, offset and the profile setting", async () => {
      const bytes = join(utf8("external_id\nINV-1\nM"), [0xfc], utf8("ller\n"));
      for (const sizes of CHUNKINGS) {
        const { error, text } = await decode(bytes, sizes);
        expect(error?.position).toEqual({ line: 3, byteOffset: 19 });
        expect(error?.problem).toBe(
          "not UTF-8: invalid byte 0xfc; if the file is not UTF-8, name its encoding in a source profile " +
            "(`encoding:` in SOURCES_FILE, see docs/vendor-files.md, Vendor files)",
        );
        expect(text).toBe("external_id\nINV-1\nM");
      }
    });
  });

  describe("with a profile's encoding", () => {
    it("when a profile without `encoding:` matched a file that is not UTF-8, then the error names that profile", async () => {
      const { error } = await decode(join(utf8("a\n"), [0xe9]), [], profile());
      expect(error?.position).toEqual({ line: 2, byteOffset: 2 });
      expect(error?.problem).toContain(
        'name its encoding in sources.yaml, profile 1 ("vendor-*.csv") (`encoding:` in SOURCES_FILE',
      );
    });

    it("when the profile says utf-8 and a byte is not, then the error points at the profile's setting", async () => {
      const { error } = await decode(join(utf8("a\n"), [0xe9]), [], profile("utf-8"));
      expect(error?.position).toEqual({ line: 2, byteOffset: 2 });
      expect(error?.problem).toContain(
        'correct `encoding: utf-8` of sources.yaml, profile 1 ("vendor-*.csv")',
      );
    });

    it.each(CHUNKINGS.map((sizes) => [sizes]))(
      "when a windows-1252 file holds every byte 0x80–0xFF (chunks %j), then each decodes as Windows-1252",
      async (sizes) => {
        const high = Uint8Array.from({ length: 128 }, (_, i) => 0x80 + i);
        const decoded = await decode(join(utf8("x\n"), high), sizes, profile("windows-1252"));
        const expected =
          "x\n€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ" +
          String.fromCharCode(...Array.from({ length: 96 }, (_, i) => 0xa0 + i));
        expect(decoded.text).toBe(expected);
        expect(decoded.choice).toEqual({ encoding: "windows-1252", by: "profile", byteOrderMark: 0 });
      },
    );

    it("when the profile says iso-8859-1, then bytes 0x80–0x9F decode as Windows-1252, as WHATWG labels it", async () => {
      for (const sizes of CHUNKINGS) {
        const decoded = await decode(
          Uint8Array.of(0x80, 0x84, 0x92, 0x93, 0x94, 0x96, 0xe9),
          sizes,
          profile("iso-8859-1"),
        );
        expect(decoded.text).toBe("€„’“”–é");
      }
    });

    it("when the profile says iso-8859-15, then its own table holds (€ at 0xA4, Š at 0xA6)", async () => {
      for (const sizes of CHUNKINGS) {
        const decoded = await decode(
          Uint8Array.of(0xa4, 0xa6, 0xbd, 0xe9, 0x80),
          sizes,
          profile("iso-8859-15"),
        );
        expect(decoded.text).toBe("€Šœé\u0080");
      }
    });

    it.each([
      ["utf-16le", join([0xff, 0xfe], utf16le(TEXT))],
      ["utf-16be", join([0xfe, 0xff], utf16be(TEXT))],
      ["utf-8", join([0xef, 0xbb, 0xbf], utf8(TEXT))],
    ] as const)(
      "when a %s file starts with its byte order mark, then the mark is dropped",
      async (encoding, bytes) => {
        for (const sizes of CHUNKINGS) {
          const decoded = await decode(bytes, sizes, profile(encoding));
          expect(decoded.text).toBe(TEXT);
          expect(decoded.choice?.byteOrderMark).toBeGreaterThan(0);
        }
      },
    );

    it.each([
      ["utf-16le", [0xef, 0xbb, 0xbf], "utf-8"],
      ["windows-1252", [0xff, 0xfe], "utf-16le"],
      ["utf-8", [0xfe, 0xff], "utf-16be"],
      ["utf-16be", [0xff, 0xfe], "utf-16le"],
    ] as const)(
      "when the profile says %s and the file starts with a %j byte order mark, then the file is rejected naming both",
      async (encoding, mark, announced) => {
        for (const sizes of [[], [1]]) {
          const { error, text } = await decode(join(mark, utf8("ab\n")), sizes, profile(encoding));
          expect(text).toBe("");
          expect(error?.position).toEqual({ line: 1, byteOffset: 0 });
          expect(error?.problem).toContain(`starts with a ${announced} byte order mark`);
          expect(error?.problem).toContain(`says \`encoding: ${encoding}\``);
        }
      },
    );
  });

  describe("invalid UTF-16", () => {
    const head = "external_id\nINV-1\n";

    it.each([["utf-16le", utf16le] as const, ["utf-16be", utf16be] as const])(
      "when a %s file ends in an odd byte, then the error names the encoding, line and offset",
      async (encoding, encode) => {
        const bytes = join(encode(`${head}INV-2`), [0x41]);
        for (const sizes of CHUNKINGS) {
          const { error, text } = await decode(bytes, sizes, profile(encoding));
          expect(text).toBe(`${head}INV-2`);
          expect(error?.position).toEqual({ line: 3, byteOffset: bytes.length - 1 });
          expect(error?.problem).toContain(`not ${encoding} as sources.yaml, profile 1`);
          expect(error?.problem).toContain("ends in an odd byte");
        }
      },
    );

    it.each([
      ["a lone low surrogate", [0x00, 0xdc], "an unpaired surrogate 0xdc00"],
      ["a high surrogate before a letter", [0x3d, 0xd8, 0x41, 0x00], "an unpaired surrogate 0xd83d"],
      ["a high surrogate at the end", [0x3d, 0xd8], "ends after the unpaired surrogate 0xd83d"],
      [
        "a high surrogate and an odd byte at the end",
        [0x3d, 0xd8, 0x41],
        "ends after the unpaired surrogate",
      ],
    ])(
      "when a UTF-16 LE file holds %s, then every chunking gives the same text and error",
      async (_name, bad, problem) => {
        const good = join([0xff, 0xfe], utf16le(`${head}😀-`));
        const bytes = join(good, bad, bad.length === 4 ? utf16le("\nmore") : []);
        for (const sizes of CHUNKINGS) {
          const { error, text } = await decode(bytes, sizes);
          expect(text).toBe(`${head}😀-`);
          expect(error?.position).toEqual({ line: 3, byteOffset: good.length });
          expect(error?.problem).toContain("not utf-16le although it starts with a utf-16le byte order mark");
          expect(error?.problem).toContain(problem);
        }
      },
    );

    it("when a UTF-16 BE file holds an unpaired surrogate after a surrogate pair, then its offset is exact", async () => {
      const good = utf16be(`${head}請求書-😀`);
      const bytes = join(good, [0xdc, 0x00], utf16be("x\n"));
      for (const sizes of CHUNKINGS) {
        const { error, text } = await decode(bytes, sizes, profile("utf-16be"));
        expect(text).toBe(`${head}請求書-😀`);
        expect(error?.position).toEqual({ line: 3, byteOffset: good.length });
      }
    });
  });

  it("when the reader stops early, then the byte source is closed", async () => {
    let closed = false;
    async function* source(): AsyncGenerator<Uint8Array> {
      try {
        for (;;) yield await Promise.resolve(utf8("a\n"));
      } finally {
        closed = true;
      }
    }
    for await (const text of decodeText("drop.csv", source(), profile("windows-1252"))) {
      expect(text).toMatch(/^(a\n)+$/);
      break;
    }
    expect(closed).toBe(true);
  });
});
