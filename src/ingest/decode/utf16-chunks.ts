import { UnreadableFileError, type FixIn } from "../unreadable-file-error.js";
import { lineEnds } from "./line-ends.js";
import { utf16ErrorIn, utf16Text } from "./utf16-error.js";

/** How a UTF-16 file's decoding failed: the text before the bad bytes, and the error to raise after it. */
interface Failure {
  readonly before: string;
  readonly error: UnreadableFileError;
}

/**
 * Decodes UTF-16 (LE or BE, without its byte order mark) while streaming, in constant memory. Invalid
 * UTF-16 (an unpaired surrogate, an odd byte at the end) raises UnreadableFileError with the byte offset
 * and line of the bad code unit, after the text before it: what the readers see before the error does
 * not depend on how the bytes were chunked. `startOffset` is where `bytes` start in the file (after the
 * byte order mark); `describe` turns what went wrong into the message's problem, and says whether that
 * names a source profile setting.
 */
export async function* utf16Chunks(
  file: string,
  encoding: "utf-16le" | "utf-16be",
  bytes: AsyncIterable<Uint8Array>,
  startOffset: number,
  describe: (problem: string) => { readonly problem: string; readonly fixIn: FixIn },
): AsyncGenerator<string> {
  const bigEndian = encoding === "utf-16be";
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
  let units = 0; // code units decoded so far
  let lines = 1; // line of the next code unit
  let afterCr = false; // the text before it ended in a CR
  let fed = 0; // bytes given to the decoder
  let tail: Uint8Array = new Uint8Array(0); // the last bytes given, of which the decoder may still hold up to 3

  const failure = (chunk: Uint8Array, atEnd: boolean, thrown: unknown): Failure => {
    // The decoder has turned 2 × units bytes into text and holds the rest of what it was given.
    const held = fed - 2 * units;
    const region = Buffer.concat([tail.subarray(tail.length - held), chunk]);
    const found = utf16ErrorIn(region, bigEndian, atEnd);
    const at = found?.index ?? 0;
    const before = utf16Text(region.subarray(0, at), bigEndian);
    const problem = found?.problem ?? `could not be decoded (${String(thrown)})`;
    const position = {
      line: lines + lineEnds(before, afterCr).count,
      byteOffset: startOffset + 2 * units + at,
    };
    const described = describe(problem);
    return { before, error: new UnreadableFileError(file, described.problem, position, described.fixIn) };
  };

  for await (const chunk of bytes) {
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch (thrown) {
      const { before, error } = failure(chunk, false, thrown);
      if (before.length > 0) yield before;
      throw error;
    }
    fed += chunk.length;
    tail = lastBytes(tail, chunk);
    units += text.length;
    const ends = lineEnds(text, afterCr);
    lines += ends.count;
    afterCr = ends.afterCr;
    if (text.length > 0) yield text;
  }
  let last: string;
  try {
    last = decoder.decode();
  } catch (thrown) {
    const { before, error } = failure(new Uint8Array(0), true, thrown);
    if (before.length > 0) yield before;
    throw error;
  }
  if (last.length > 0) yield last;
}

/** The last 3 bytes of `tail` followed by `chunk` (copied: a source may reuse its buffers). */
function lastBytes(tail: Uint8Array, chunk: Uint8Array): Uint8Array {
  if (chunk.length >= 3) return Uint8Array.from(chunk.subarray(chunk.length - 3));
  const joined = Buffer.concat([tail, chunk]);
  return joined.subarray(Math.max(0, joined.length - 3));
}
