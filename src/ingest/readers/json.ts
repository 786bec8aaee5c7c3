import { pickFields } from "../../invoice/normalise.js";
import type { RawItem } from "../raw-item.js";
import { UnreadableFileError } from "../unreadable-file-error.js";
import { previewValue } from "./json-error.js";
import { JsonInvoiceScanner, MAX_JSON_ELEMENT_CHARS, type ScanEvent } from "./json-scanner.js";

/**
 * Reads a JSON file: a top-level array of invoices or `{"invoices": [...]}`, streamed element by element.
 * `line` is the 1-based element index, as README.md defines it for JSON arrays ("The drop folder").
 */
export async function* readJson(file: string, text: AsyncIterable<string>): AsyncGenerator<RawItem[]> {
  const scanner = new JsonInvoiceScanner();
  for await (const chunk of text) yield* batchOf(file, scanner.push(chunk));
  yield* batchOf(file, scanner.end());
}

/** The items of one chunk; the items before an error are passed on before the error is thrown. */
function* batchOf(file: string, events: Iterable<ScanEvent>): Generator<RawItem[]> {
  const items: RawItem[] = [];
  for (const event of events) {
    if (event.kind === "error") {
      if (items.length > 0) yield items;
      throw new UnreadableFileError(file, event.message, { line: event.line, column: event.column });
    }
    items.push(toItem(event));
  }
  if (items.length > 0) yield items;
}

function toItem(event: Exclude<ScanEvent, { kind: "error" }>): RawItem {
  if (event.kind === "too-long") {
    const reason = `is longer than ${MAX_JSON_ELEMENT_CHARS} characters`;
    return { kind: "invalid", line: event.index, errors: [{ field: "(element)", reason }] };
  }
  const { index, value } = event;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      kind: "invalid",
      line: index,
      errors: [{ field: "(element)", value: previewValue(value), reason: "must be a JSON object" }],
    };
  }
  return { kind: "fields", line: index, picked: pickFields(value as Record<string, unknown>) };
}
