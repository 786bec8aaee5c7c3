import type { SourceProfile } from "../profiles/source-profile.js";
import type { RawItem } from "../raw-item.js";
import { UnreadableFileError } from "../unreadable-file-error.js";
import { readerProfile, type ReaderProfile } from "./reader-profile.js";
import { describeJsonError, previewValue } from "./json-error.js";
import { pickJsonObject } from "./json-duplicate-keys.js";

/** Longest NDJSON line accepted, in characters; a longer line is rejected without being kept whole. */
export const MAX_NDJSON_LINE_CHARS = 8 * 1024 * 1024;

/**
 * Reads NDJSON / JSON Lines: one object per line (ended by LF, CRLF or CR); blank lines skipped; a broken
 * line is rejected alone.
 * A file without one non-blank line is rejected as empty, as an empty CSV or JSON file is: more likely a
 * failed export than a night without invoices. Each object is picked through the source profile's dotted
 * paths, defaults and values, if any.
 */
export async function* readNdjson(
  file: string,
  text: AsyncIterable<string>,
  source?: SourceProfile,
): AsyncGenerator<RawItem[]> {
  const profile = readerProfile(source);
  let pending = "";
  let oversized = false;
  let line = 1;
  let empty = true;
  let lfAfterCr = false; // the chunk before ended in CR: a LF starting this one ends no other line
  for await (const chunk of text) {
    const items: RawItem[] = [];
    let start = lfAfterCr && chunk.startsWith("\n") ? 1 : 0;
    if (chunk.length > 0) lfAfterCr = false;
    const ends = new LineEnds(chunk);
    for (let end = ends.next(start); end !== -1; end = ends.next(start)) {
      const piece = chunk.slice(start, end);
      start = end + 1;
      if (chunk.charCodeAt(end) === CR) {
        if (start === chunk.length) lfAfterCr = true;
        else if (chunk.charCodeAt(start) === LF) start++;
      }
      // The limit holds however the line was chunked, also when its end arrives in the same chunk.
      if (oversized || pending.length + piece.length > MAX_NDJSON_LINE_CHARS) items.push(tooLong(line));
      else {
        const item = parseLine(pending + piece, line, profile);
        if (item !== undefined) items.push(item);
      }
      pending = "";
      oversized = false;
      line++;
    }
    if (!oversized) {
      pending += chunk.slice(start);
      if (pending.length > MAX_NDJSON_LINE_CHARS) {
        pending = "";
        oversized = true;
      }
    }
    if (items.length > 0) {
      empty = false;
      yield items;
    }
  }
  const last = oversized ? tooLong(line) : parseLine(pending, line, profile);
  if (last !== undefined) yield [last];
  else if (empty)
    throw new UnreadableFileError(file, "the file is empty: NDJSON needs one JSON object per line");
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * Where lines of one chunk end: at LF, CRLF or a CR alone, as the CSV reader takes them (a JSON line holds
 * no raw line break: inside a string JSON writes it escaped). Each kind is searched for once per stretch
 * of the chunk (indexOf, which is fast), so a chunk without CRs is not searched for them again per line.
 */
class LineEnds {
  private lf: number;
  private cr: number;

  constructor(private readonly chunk: string) {
    this.lf = chunk.indexOf("\n");
    this.cr = chunk.indexOf("\r");
  }

  /** The first line end at or after `from`; -1 when the chunk ends first. */
  next(from: number): number {
    if (this.lf !== -1 && this.lf < from) this.lf = this.chunk.indexOf("\n", from);
    if (this.cr !== -1 && this.cr < from) this.cr = this.chunk.indexOf("\r", from);
    return this.lf === -1 ? this.cr : this.cr === -1 ? this.lf : Math.min(this.lf, this.cr);
  }
}

function tooLong(line: number): RawItem {
  return {
    kind: "invalid",
    line,
    errors: [{ field: "(line)", reason: `is longer than ${MAX_NDJSON_LINE_CHARS} characters` }],
  };
}

function parseLine(text: string, line: number, profile: ReaderProfile): RawItem | undefined {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      kind: "invalid",
      line,
      errors: [{ field: "(line)", reason: `is not valid JSON: ${describeJsonError(error)}` }],
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      kind: "invalid",
      line,
      errors: [{ field: "(line)", value: previewValue(value), reason: "must be a JSON object" }],
    };
  }
  const picked = profile.apply(pickJsonObject(profile, value as Record<string, unknown>, text));
  return { kind: "fields", line, picked };
}
