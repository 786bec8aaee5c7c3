import type { Encoding, SourceProfile } from "../profiles/source-profile.js";
import { UnreadableFileError } from "../unreadable-file-error.js";

/** The byte order marks recognised at the start of a file, and the encoding each announces. */
const BYTE_ORDER_MARKS: readonly (readonly [Encoding, readonly number[]])[] = [
  ["utf-8", [0xef, 0xbb, 0xbf]],
  ["utf-16le", [0xff, 0xfe]],
  ["utf-16be", [0xfe, 0xff]],
];

/** How a file's text is decoded, and what chose that: `check` and the batch summary show it. */
export interface EncodingChoice {
  readonly encoding: Encoding;
  /** The source profile's `encoding:`, the file's byte order mark, or neither (UTF-8). */
  readonly by: "profile" | "byte-order-mark" | "default";
  /** Length of the byte order mark the file starts with (dropped from the text), 0 if none. */
  readonly byteOrderMark: number;
}

/** The byte order mark `head` (the file's first bytes, or all of a shorter file) starts with, if any. */
export function byteOrderMarkOf(
  head: Uint8Array,
): { readonly encoding: Encoding; readonly length: number } | undefined {
  for (const [encoding, mark] of BYTE_ORDER_MARKS) {
    if (mark.every((byte, i) => head[i] === byte)) return { encoding, length: mark.length };
  }
  return undefined;
}

/**
 * The encoding of a file that starts with `head` (at least 3 bytes, the longest mark, unless the
 * file is shorter): the profile's if it names one, else the one a byte order mark announces, else UTF-8.
 * A byte order mark that contradicts the profile makes the file unreadable: one of the two is wrong, and
 * guessing which would decode every character of the file wrongly.
 */
export function chooseEncoding(file: string, head: Uint8Array, profile?: SourceProfile): EncodingChoice {
  const mark = byteOrderMarkOf(head);
  const named = profile?.encoding;
  if (profile === undefined || named === undefined) {
    return mark === undefined
      ? { encoding: "utf-8", by: "default", byteOrderMark: 0 }
      : { encoding: mark.encoding, by: "byte-order-mark", byteOrderMark: mark.length };
  }
  if (mark === undefined) return { encoding: named, by: "profile", byteOrderMark: 0 };
  if (mark.encoding === named) return { encoding: named, by: "profile", byteOrderMark: mark.length };
  throw new UnreadableFileError(
    file,
    `the file starts with a ${mark.encoding} byte order mark, but ${profile.name} says \`encoding: ${named}\`; ` +
      `correct the profile's \`encoding:\` (SOURCES_FILE, see docs/vendor-files.md, Vendor files) or save the file as ${named}`,
    { line: 1, byteOffset: 0 },
    "file-or-profile",
  );
}
