import type { Encoding, SourceProfile } from "../profiles/source-profile.js";
import { UnreadableFileError } from "../unreadable-file-error.js";

const WHERE = "SOURCES_FILE, see docs/vendor-files.md, Vendor files";

/**
 * Bytes a reader looks at before decoding: enough for the signatures below and for 32 characters of
 * UTF-16, which a header line or a first JSON object fills.
 */
export const SNIFF_LENGTH = 64;

/**
 * Files that are not text at all, by the signature they start with (each format's own "magic number"), and
 * what to do: read as text, each would be blamed on its encoding or its columns.
 */
const NOT_TEXT: readonly {
  readonly magic: readonly number[];
  readonly what: string;
  readonly todo: string;
}[] = [
  {
    magic: [0x1f, 0x8b],
    what: "gzip-compressed",
    todo: "decompress it (gunzip, or 7-Zip on Windows) and drop the file it holds",
  },
  {
    magic: [0x50, 0x4b, 0x03, 0x04],
    what: "a ZIP archive (an Excel .xlsx workbook is one)",
    todo: "unpack it, or save the sheet as CSV UTF-8, and drop that file",
  },
  {
    magic: [0xd0, 0xcf, 0x11, 0xe0],
    what: "a legacy Office document (Excel .xls)",
    todo: "save the sheet as CSV UTF-8 and drop that file",
  },
  {
    magic: [0x25, 0x50, 0x44, 0x46, 0x2d],
    what: "a PDF document",
    todo: "drop the invoices as CSV, JSON or NDJSON",
  },
];

/**
 * Throws UnreadableFileError when `head` (the file's first SNIFF_LENGTH bytes, or all of a shorter file)
 * shows the file is not text in `encoding`: a compressed or office file, whatever its name says; or
 * UTF-16 without a byte order mark, which UTF-8 would take, NULs and all, for text whose header lacks
 * every column. A file starting with a byte order mark is text and is not looked at.
 */
export function checkContent(
  file: string,
  head: Uint8Array,
  choice: { readonly encoding: Encoding; readonly byteOrderMark: number },
  profile: SourceProfile | undefined,
): void {
  if (choice.byteOrderMark > 0) return;
  const at = { line: 1, byteOffset: 0 };
  for (const { magic, what, todo } of NOT_TEXT)
    if (head.length >= magic.length && magic.every((byte, i) => head[i] === byte))
      throw new UnreadableFileError(file, `the file is ${what}, not text: ${todo}`, at);
  if (choice.encoding === "utf-16le" || choice.encoding === "utf-16be") return;
  const utf16 = utf16ByNuls(head);
  if (utf16 === undefined) return;
  const named = profile === undefined ? "in a source profile" : `in ${profile.name}`;
  throw new UnreadableFileError(
    file,
    `the file looks like ${utf16.toUpperCase()} without a byte order mark (every second byte of its start is ` +
      `NUL); save it as UTF-8, or name \`encoding: ${utf16}\` ${named} (${WHERE})`,
    at,
    "file-or-profile",
  );
}

/**
 * UTF-16 told by its NULs: text in Latin script has a NUL as the high byte of nearly every character, so
 * at least half the characters of the head have one on the same side and none on the other; UTF-8 text
 * has no NUL at all. Undefined for fewer than 4 characters, too few to tell.
 */
function utf16ByNuls(head: Uint8Array): "utf-16le" | "utf-16be" | undefined {
  const chars = Math.floor(head.length / 2);
  if (chars < 4) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < chars * 2; i += 2) {
    if (head[i] === 0) even++;
    if (head[i + 1] === 0) odd++;
  }
  if (odd * 2 >= chars && even === 0) return "utf-16le";
  if (even * 2 >= chars && odd === 0) return "utf-16be";
  return undefined;
}
