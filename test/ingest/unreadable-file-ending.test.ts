import { describe, expect, it } from "vitest";
import type { SourceProfile } from "../../src/ingest/profiles/source-profile.js";
import type { FileFormat } from "../../src/ingest/read-invoice-file.js";
import { profileOf, readThrough } from "./profile-helpers.js";
import { fileErrorOf } from "./read-helpers.js";

const NAMES = "external_id,currency,destination_country,archive_policy";
const FILE_ONLY = "Fix the file and drop it again.";
const FILE_OR_PROFILE = "Fix the file, or its source profile, and drop it again.";

/** The message of the file error `input` is read into. */
async function messageOf(
  input: string | Uint8Array,
  format: FileFormat,
  profile?: SourceProfile,
): Promise<string> {
  return fileErrorOf((await readThrough(input, format, profile)).items).error.message;
}

/** UTF-16 LE bytes of `text`, with the byte order mark when asked, and one odd byte at the end. */
function utf16WithOddEnd(text: string, mark: boolean): Uint8Array {
  return Uint8Array.from([...(mark ? [0xff, 0xfe] : []), ...Buffer.from(text, "utf16le"), 0x0a]);
}

describe("how a rejected file's message ends", () => {
  it.each([
    [
      "two delimiters split the header",
      () =>
        messageOf(
          "archive_policy;external_id;currency;destination_country;x,external_id,currency,destination_country,archive_policy\n",
          "csv",
        ),
    ],
    ["no delimiter finds the required columns", () => messageOf("Invoice No,Currency\nA,EUR\n", "csv")],
    [
      "the profile's delimiter does not split the header",
      () => messageOf(`${NAMES}\n`, "csv", profileOf({ delimiter: "|" })),
    ],
    ["the file ends before header_row", () => messageOf("one\ntwo\n", "csv", profileOf({ headerRow: 4 }))],
    [
      "only blank lines follow the preamble",
      () => messageOf("preamble\n\n\n", "csv", profileOf({ headerRow: 2 })),
    ],
    ["a byte is not UTF-8", () => messageOf(Uint8Array.from([0x41, 0xfc, 0x0a]), "csv")],
    [
      "the byte order mark contradicts the profile's encoding",
      () => messageOf(utf16WithOddEnd(`${NAMES}\n`, true), "csv", profileOf({ encoding: "windows-1252" })),
    ],
    [
      "the file is not the UTF-16 its profile names",
      () => messageOf(utf16WithOddEnd(`${NAMES}\n`, false), "csv", profileOf({ encoding: "utf-16le" })),
    ],
  ])(
    "when %s, then the message names the profile setting and ends saying to fix the file or its profile",
    async (_, message) => {
      expect((await message()).endsWith(`. ${FILE_OR_PROFILE}`)).toBe(true);
    },
  );

  it.each([
    ["the header row is broken", () => messageOf(`\n"external_id,currency\n`, "csv")],
    ["a CSV file is empty", () => messageOf("", "csv")],
    ["the JSON is broken", () => messageOf("[{", "json")],
    [
      "a UTF-16 file with a byte order mark ends in an odd byte",
      () => messageOf(utf16WithOddEnd(`${NAMES}\n`, true), "csv"),
    ],
  ])("when %s, then the message ends saying to fix the file", async (_, message) => {
    expect((await message()).endsWith(`. ${FILE_ONLY}`)).toBe(true);
  });
});
