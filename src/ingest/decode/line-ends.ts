const CR = 0x0d;

/** The line ends of one piece of a file, and whether it ended in a CR (whose LF may start the next piece). */
export interface LineEnds {
  readonly count: number;
  readonly afterCr: boolean;
}

/**
 * The line ends in `chunk` (bytes, or decoded text) as the CSV reader ends lines: LF, CRLF and a CR alone
 * (Excel's "CSV (Macintosh)"), a CRLF counted once even when a piece ends between the two. `afterCr`: the
 * piece before ended in a CR. Found with indexOf, which is fast: a file without CRs is scanned for them once.
 */
export function lineEnds(chunk: Uint8Array | string, afterCr: boolean): LineEnds {
  const at = (i: number) => (typeof chunk === "string" ? chunk.charCodeAt(i) : chunk[i]);
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1))
    if (!(i === 0 ? afterCr : at(i - 1) === CR)) count++;
  for (let i = text.indexOf("\r"); i !== -1; i = text.indexOf("\r", i + 1)) count++;
  return { count, afterCr: chunk.length === 0 ? afterCr : at(chunk.length - 1) === CR };
}
