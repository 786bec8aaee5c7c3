import { isUtf8 } from "node:buffer";
import { UnreadableFileError, type FixIn } from "../unreadable-file-error.js";
import { lineEnds } from "./line-ends.js";

/**
 * Checks a byte stream is strict UTF-8, chunk by chunk, in constant memory, and yields it re-cut on
 * character boundaries, without a leading BOM. Invalid bytes raise UnreadableFileError with their exact
 * byte offset and line and `fix` (what to do about it, and whether that names a source profile setting),
 * after the text before them has been yielded: what the readers see before the error is the same however
 * the bytes were chunked.
 */
export async function* utf8Chunks(
  file: string,
  source: AsyncIterable<Uint8Array>,
  fix: { readonly advice: string; readonly fixIn: FixIn },
): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  let offset = 0; // byte offset of carry[0] in the file
  let lines = 1; // line of carry[0]
  let afterCr = false; // the bytes before carry[0] ended in a CR
  let first = true;
  for await (const piece of source) {
    const bytes = carry.length === 0 ? Buffer.from(piece) : Buffer.concat([carry, piece]);
    const cut = completeLength(bytes);
    const good = isUtf8(bytes.subarray(0, cut)) ? cut : firstInvalidByte(bytes.subarray(0, cut));
    const whole = bytes.subarray(0, good);
    let out = whole;
    if (first && whole.length > 0) {
      if (whole[0] === 0xef && whole[1] === 0xbb && whole[2] === 0xbf) out = whole.subarray(3);
      first = false;
    }
    const ends = lineEnds(whole, afterCr);
    lines += ends.count;
    afterCr = ends.afterCr;
    offset += good;
    carry = Buffer.from(bytes.subarray(cut));
    if (out.length > 0) yield out;
    if (good < cut) throw invalidAt(file, bytes[good] ?? 0, offset, lines, fix);
  }
  if (carry.length > 0) {
    throw invalidAt(file, carry[0] ?? 0, offset, lines, fix, "the file ends inside a multi-byte character");
  }
}

/** Length of the prefix that ends on a character boundary (an incomplete trailing sequence waits). */
function completeLength(bytes: Buffer): number {
  const end = bytes.length;
  for (let back = 1; back <= Math.min(3, end); back++) {
    const b = bytes[end - back] ?? 0;
    if ((b & 0xc0) !== 0x80) {
      // Only a byte that can start a sequence waits for more; any other fails the check at once.
      const need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 1;
      return need > back ? end - back : end;
    }
  }
  return end;
}

function invalidAt(
  file: string,
  byte: number,
  byteOffset: number,
  line: number,
  fix: { readonly advice: string; readonly fixIn: FixIn },
  why?: string,
): UnreadableFileError {
  const problem = why ?? `not UTF-8: invalid byte 0x${byte.toString(16).padStart(2, "0")}`;
  return new UnreadableFileError(file, `${problem}; ${fix.advice}`, { line, byteOffset }, fix.fixIn);
}

/** Index of the first byte that does not start or continue a valid UTF-8 sequence (slow path, errors only). */
function firstInvalidByte(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length === 0) return i;
    i += length;
  }
  return bytes.length;
}

function sequenceLength(bytes: Buffer, i: number): number {
  const b = bytes[i] ?? 0;
  const need =
    b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (need === 0 || i + need > bytes.length) return 0;
  if (!isUtf8(bytes.subarray(i, i + need))) return 0;
  return need;
}

/** The same chunks as strings; safe because utf8Chunks cuts on character boundaries. */
export async function* asText(chunks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  for await (const chunk of chunks) yield chunk.toString("utf8");
}
