import { UnreadableFileError } from "../unreadable-file-error.js";

/**
 * The text after its first `count` physical lines (each ended by LF, so CRLF too): the preamble some
 * exports put above the header, skipped by lines and not by records, as it may hold anything (quotes
 * that never close included). A file that ends within them is rejected.
 */
export async function* afterLines(
  file: string,
  text: AsyncIterable<string>,
  count: number,
  profileName: string,
): AsyncGenerator<string> {
  let left = count;
  for await (const chunk of text) {
    if (left === 0) {
      yield chunk;
      continue;
    }
    let at = 0;
    while (left > 0) {
      const lf = chunk.indexOf("\n", at);
      if (lf === -1) break;
      at = lf + 1;
      left--;
    }
    if (left === 0 && at < chunk.length) yield chunk.slice(at);
  }
  if (left > 0) {
    const problem =
      `the file ends before line ${count + 1}, where ${profileName} puts the header ` +
      `(header_row: ${count + 1}); set header_row to the header's line`;
    throw new UnreadableFileError(file, problem, {}, "file-or-profile");
  }
}
