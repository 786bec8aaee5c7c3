import type { SourceProfile } from "../profiles/source-profile.js";
import type { RawItem } from "../raw-item.js";
import { UnreadableFileError } from "../unreadable-file-error.js";
import { readerProfile, type ReaderProfile } from "./reader-profile.js";
import { previewValue } from "./json-error.js";
import { pickJsonObject } from "./json-duplicate-keys.js";
import { JsonInvoiceScanner, MAX_JSON_ELEMENT_CHARS, type ScanEvent } from "./json-scanner.js";

/**
 * Reads a JSON file: a top-level array of invoices or `{"invoices": [...]}`, streamed element by element,
 * each picked through the source profile's dotted paths, defaults and values, if any.
 * `line` is the 1-based element index, as docs/vendor-files.md defines it for JSON arrays ("Batches and reports").
 */
export async function* readJson(
  file: string,
  text: AsyncIterable<string>,
  source?: SourceProfile,
): AsyncGenerator<RawItem[]> {
  const profile = readerProfile(source);
  const scanner = new JsonInvoiceScanner();
  for await (const chunk of text) yield* batchOf(file, scanner.push(chunk), profile);
  yield* batchOf(file, scanner.end(), profile);
}

/** The items of one chunk; the items before an error are passed on before the error is thrown. */
function* batchOf(file: string, events: Iterable<ScanEvent>, profile: ReaderProfile): Generator<RawItem[]> {
  const items: RawItem[] = [];
  for (const event of events) {
    if (event.kind === "error") {
      if (items.length > 0) yield items;
      throw new UnreadableFileError(file, event.message, { line: event.line, column: event.column });
    }
    items.push(toItem(event, profile));
  }
  if (items.length > 0) yield items;
}

function toItem(event: Exclude<ScanEvent, { kind: "error" }>, profile: ReaderProfile): RawItem {
  if (event.kind === "too-long") {
    const reason = `is longer than ${MAX_JSON_ELEMENT_CHARS} characters`;
    return { kind: "invalid", line: event.index, errors: [{ field: "(element)", reason }] };
  }
  const { index, value, text } = event;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      kind: "invalid",
      line: index,
      errors: [{ field: "(element)", value: previewValue(value), reason: "must be a JSON object" }],
    };
  }
  const picked = profile.apply(pickJsonObject(profile, value as Record<string, unknown>, text));
  return { kind: "fields", line: index, picked };
}
