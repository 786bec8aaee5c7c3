import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  JsonInvoiceScanner,
  MAX_JSON_ELEMENT_CHARS,
  type ScanEvent,
  type ScanWork,
} from "../../src/ingest/readers/json-scanner.js";

/**
 * The scanner's work must grow linearly with its input whatever the shape of the document and however it
 * is chunked: a token that spans chunks is never scanned or copied again from its start. Work is counted
 * by the scanner itself (characters examined, copied or parsed), never timed.
 */

/** Work allowed per input character: line counting, scanning, keeping, joining and parsing each once. */
const PER_CHAR = 6;

const RECORD = '{"external_id":"INV-1","currency":"EUR"}';

/** A document whose one long token (n characters) is of the given shape, followed by one invoice. */
const SHAPES: Readonly<Record<string, (n: number) => string>> = {
  "long key": (n) => `{"${"k".repeat(n)}": 1, "invoices": [${RECORD}]}`,
  "long escaped key": (n) => `{"${"\\\\".repeat(Math.ceil(n / 2))}": 1, "invoices": [${RECORD}]}`,
  "long top-level string": (n) => `{"meta": "${"s".repeat(n)}", "invoices": [${RECORD}]}`,
  "long top-level number": (n) => `{"meta": 1${"0".repeat(n)}, "invoices": [${RECORD}]}`,
  "deep top-level nesting": (n) => `{"meta": ${"[".repeat(n)}${"]".repeat(n)}, "invoices": [${RECORD}]}`,
  "deep element nesting": (n) => `[${'{"a":'.repeat(n)}1${"}".repeat(n)}, ${RECORD}]`,
  "long element string": (n) => `[{"note": "${"x".repeat(n)}"}, ${RECORD}]`,
  "long white space": (n) => `[${" \n".repeat(n)}${RECORD}]`,
  "many tiny elements": (n) => `[${"1,".repeat(n)}${RECORD}]`,
};

interface Scanned {
  readonly work: number;
  readonly events: readonly ScanEvent[];
}

/** Scans `text` fed in pieces of the given sizes (cycling), counting the scanner's work. */
function scan(text: string, sizes: readonly number[]): Scanned {
  const work: ScanWork = { chars: 0 };
  const scanner = new JsonInvoiceScanner(work);
  const events: ScanEvent[] = [];
  for (let at = 0, k = 0; at < text.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length] ?? 1);
    events.push(...scanner.push(text.slice(at, at + size)));
    at += size;
  }
  events.push(...scanner.end());
  return { work: work.chars, events };
}

/** The last event, which for every shape here is the invoice read whole. */
function lastValue(events: readonly ScanEvent[]): unknown {
  const last = events.at(-1);
  return last?.kind === "element" ? last.value : last;
}

describe("JSON scanner work", () => {
  it("when any shape is fed in any chunking, then the work stays within a constant per input character", () => {
    const shapeArb = fc.constantFrom(...Object.keys(SHAPES));
    const lengthArb = fc.integer({ min: 1, max: 40_000 });
    const sizesArb = fc.array(fc.integer({ min: 1, max: 4096 }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(shapeArb, lengthArb, sizesArb, (shape, n, sizes) => {
        const text = (SHAPES[shape] ?? String)(n);
        const { work, events } = scan(text, sizes);
        expect(lastValue(events)).toEqual(JSON.parse(RECORD));
        expect(work).toBeLessThanOrEqual(PER_CHAR * text.length);
      }),
      { numRuns: 200 },
    );
  });

  // The shapes of one long token; thousands of tiny values are covered by the property above.
  const ONE_TOKEN = [
    "long key",
    "long escaped key",
    "long top-level string",
    "long top-level number",
    "deep top-level nesting",
    "long element string",
  ];

  it.each(ONE_TOKEN)(
    "when the %s is 4 MiB and comes in 16 KiB chunks, as files are read, then the work is linear",
    (shape) => {
      const text = (SHAPES[shape] ?? String)(4 * 1024 * 1024);
      const { work, events } = scan(text, [16 * 1024]);
      expect(lastValue(events)).toEqual(JSON.parse(RECORD));
      expect(work).toBeLessThanOrEqual(PER_CHAR * text.length);
    },
  );

  it("when an element is longer than the limit, then it is rejected and the work stays linear", () => {
    const text = `[{"note": "${"x".repeat(MAX_JSON_ELEMENT_CHARS)}"}, ${RECORD}]`;
    const { work, events } = scan(text, [16 * 1024]);
    expect(events.map((event) => event.kind)).toEqual(["too-long", "element"]);
    expect(work).toBeLessThanOrEqual(PER_CHAR * text.length);
  });
});
