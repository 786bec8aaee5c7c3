import type { SourceProfile } from "../profiles/source-profile.js";
import type { RawItem } from "../raw-item.js";
import { UnreadableFileError } from "../unreadable-file-error.js";
import { readerProfile, type ReaderProfile } from "./reader-profile.js";
import { describeJsonError, previewValue } from "./json-error.js";

/** Longest NDJSON line accepted, in characters; a longer line is rejected without being kept whole. */
export const MAX_NDJSON_LINE_CHARS = 8 * 1024 * 1024;

/**
 * Reads NDJSON / JSON Lines: one object per line; blank lines skipped; a broken line is rejected alone.
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
  for await (const chunk of text) {
    const items: RawItem[] = [];
    let start = 0;
    for (let nl = chunk.indexOf("\n"); nl !== -1; nl = chunk.indexOf("\n", start)) {
      const piece = chunk.slice(start, nl);
      start = nl + 1;
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

function tooLong(line: number): RawItem {
  return {
    kind: "invalid",
    line,
    errors: [{ field: "(line)", reason: `is longer than ${MAX_NDJSON_LINE_CHARS} characters` }],
  };
}

function parseLine(raw: string, line: number, profile: ReaderProfile): RawItem | undefined {
  const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
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
  const picked = profile.apply(profile.pick(value as Record<string, unknown>));
  return { kind: "fields", line, picked };
}
