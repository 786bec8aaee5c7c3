import { UnreadableFileError } from "../unreadable-file-error.js";

const LF = 0x0a;
const CR = 0x0d;

/**
 * The text after its first `count` physical lines, each ended by LF, CRLF or a CR alone (as the record
 * splitter counts them): the preamble some exports put above the header, skipped by lines and not by
 * records, as it may hold anything (quotes that never close included). A file that ends within them is
 * rejected.
 */
export async function* afterLines(
  file: string,
  text: AsyncIterable<string>,
  count: number,
  profileName: string,
): AsyncGenerator<string> {
  let left = count;
  // The last line skipped ended with a CR at the end of a chunk: an LF starting the next is part of it.
  let pendingCr = false;
  for await (const chunk of text) {
    let at = 0;
    if (pendingCr && chunk.length > 0) {
      pendingCr = false;
      if (chunk.charCodeAt(0) === LF) at = 1;
    }
    while (left > 0 && at < chunk.length) {
      const end = lineEndAt(chunk, at);
      if (end === -1) {
        at = chunk.length;
        break;
      }
      left--;
      at = end + 1;
      if (chunk.charCodeAt(end) === CR) {
        if (at === chunk.length) pendingCr = true;
        else if (chunk.charCodeAt(at) === LF) at++;
      }
    }
    if (left === 0 && at < chunk.length) yield at === 0 ? chunk : chunk.slice(at);
  }
  if (left > 0) {
    const problem =
      `the file ends before line ${count + 1}, where ${profileName} puts the header ` +
      `(header_row: ${count + 1}); set header_row to the header's line`;
    throw new UnreadableFileError(file, problem, {}, "file-or-profile");
  }
}

/** The index of the first LF or CR at or after `from`, or -1. */
function lineEndAt(chunk: string, from: number): number {
  const lf = chunk.indexOf("\n", from);
  const cr = chunk.indexOf("\r", from);
  if (lf === -1) return cr;
  return cr === -1 || lf < cr ? lf : cr;
}
