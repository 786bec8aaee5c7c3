import type { SourceProfile } from "../profiles/source-profile.js";
import { chooseEncoding, type EncodingChoice } from "./byte-order-mark.js";
import { checkContent, SNIFF_LENGTH } from "./content-sniff.js";
import { utf16Chunks } from "./utf16-chunks.js";
import type { FixIn } from "../unreadable-file-error.js";
import { asText, utf8Chunks } from "./utf8-chunks.js";

export type { EncodingChoice } from "./byte-order-mark.js";

const WHERE = "SOURCES_FILE, see docs/vendor-files.md, Vendor files";

/**
 * Turns a drop file's bytes into text, chunk by chunk, in constant memory (docs/vendor-files.md, "Vendor files").
 * The encoding is the profile's `encoding:`, else the one a byte order mark at the start announces
 * (UTF-8, UTF-16 LE or BE), else UTF-8; a byte order mark is never part of the text. A file that is not
 * text at all (gzip, ZIP, Office, PDF) or UTF-16 without a byte order mark is refused as such first. `onEncoding` hears
 * the choice before any text is yielded. Bytes that are not text in that encoding raise
 * UnreadableFileError with their byte offset and line, after the text before them: line numbers are
 * physical lines of the file whatever its encoding, and what the readers see before an error does not
 * depend on how the bytes were chunked.
 */
export async function* decodeText(
  file: string,
  source: AsyncIterable<Uint8Array>,
  profile: SourceProfile | undefined,
  onEncoding?: (choice: EncodingChoice) => void,
): AsyncGenerator<string> {
  const bytes = source[Symbol.asyncIterator]();
  try {
    const { head, ended } = await readHead(bytes);
    const choice = chooseEncoding(file, head, profile);
    checkContent(file, head, choice, profile);
    onEncoding?.(choice);
    const { encoding, byteOrderMark } = choice;
    if (encoding === "utf-8") {
      // Checked by hand rather than by TextDecoder: the error can then name the exact byte and line.
      // utf8Chunks drops the byte order mark itself and counts offsets from the start of the file.
      yield* asText(utf8Chunks(file, replay(head, bytes, ended), utf8Fix(profile)));
      return;
    }
    const rest = replay(head.subarray(byteOrderMark), bytes, ended);
    if (encoding === "utf-16le" || encoding === "utf-16be") {
      yield* utf16Chunks(file, encoding, rest, byteOrderMark, (problem) =>
        utf16Problem(choice, profile, problem),
      );
      return;
    }
    yield* singleByteChunks(encoding, rest);
  } finally {
    await bytes.return?.();
  }
}

/**
 * windows-1252, iso-8859-1 and iso-8859-15 through TextDecoder. Every byte is a character in these
 * (WHATWG's tables map all 256), so nothing can be invalid and `fatal` never fires.
 *
 * iso-8859-1 is decoded as windows-1252, as the WHATWG Encoding Standard (and so TextDecoder) does with
 * that label: the two differ only in bytes 0x80–0x9F, which ISO-8859-1 leaves to C1 control characters
 * that no invoice field holds, while files labelled Latin-1 in practice come from Windows software and
 * mean € ‚ „ … ‘ ’ “ ” – — there. iso-8859-15 keeps its own table (€ at 0xA4; 0x80–0x9F are C1 controls).
 *
 * Every call passes `stream: true` (the last one only flushes): Node 20 decodes a call without it for the
 * labels windows-1252 and iso-8859-1 by a Latin-1 shortcut that maps 0x80–0x9F to C1 controls and can
 * drop bytes, while streaming calls go through ICU, which follows WHATWG's tables. A decoder that has
 * once streamed never takes the shortcut again (test/ingest/decode-text.test.ts pins this).
 */
async function* singleByteChunks(
  encoding: "windows-1252" | "iso-8859-1" | "iso-8859-15",
  bytes: AsyncIterable<Uint8Array>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  for await (const chunk of bytes) {
    const text = decoder.decode(chunk, { stream: true });
    if (text.length > 0) yield text;
  }
  const last = decoder.decode();
  if (last.length > 0) yield last;
}

/** What to do about bytes that are not UTF-8: each advice names a profile's `encoding:`. */
function utf8Fix(profile: SourceProfile | undefined): { readonly advice: string; readonly fixIn: FixIn } {
  const advice =
    profile === undefined
      ? `if the file is not UTF-8, name its encoding in a source profile (\`encoding:\` in ${WHERE})`
      : profile.encoding === undefined
        ? `if the file is not UTF-8, name its encoding in ${profile.name} (\`encoding:\` in ${WHERE})`
        : `if the file is not UTF-8, correct \`encoding: utf-8\` of ${profile.name} (${WHERE})`;
  return { advice, fixIn: "file-or-profile" };
}

function utf16Problem(
  choice: EncodingChoice,
  profile: SourceProfile | undefined,
  problem: string,
): { readonly problem: string; readonly fixIn: FixIn } {
  const { encoding } = choice;
  return choice.by === "profile" && profile !== undefined
    ? {
        problem: `not ${encoding} as ${profile.name} says: ${problem}; save the file as ${encoding} or correct the profile's \`encoding:\` (${WHERE})`,
        fixIn: "file-or-profile",
      }
    : {
        problem: `not ${encoding} although it starts with a ${encoding} byte order mark: ${problem}; save the file again as UTF-16 or UTF-8`,
        fixIn: "file",
      };
}

/** The first bytes of a file, enough to tell its byte order mark and what it holds (all of it if it is shorter). */
async function readHead(
  bytes: AsyncIterator<Uint8Array>,
): Promise<{ readonly head: Uint8Array; readonly ended: boolean }> {
  const parts: Uint8Array[] = [];
  let length = 0;
  while (length < SNIFF_LENGTH) {
    const next = await bytes.next();
    if (next.done === true) return { head: Buffer.concat(parts), ended: true };
    parts.push(next.value);
    length += next.value.length;
  }
  return {
    head: parts.length === 1 && parts[0] !== undefined ? parts[0] : Buffer.concat(parts),
    ended: false,
  };
}

/** `head` followed by the rest of `bytes`. */
async function* replay(
  head: Uint8Array,
  bytes: AsyncIterator<Uint8Array>,
  ended: boolean,
): AsyncGenerator<Uint8Array> {
  if (head.length > 0) yield head;
  if (ended) return;
  for (let next = await bytes.next(); next.done !== true; next = await bytes.next()) yield next.value;
}
