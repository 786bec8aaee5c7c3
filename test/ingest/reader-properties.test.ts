import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FileFormat } from "../../src/ingest/read-invoice-file.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import { deriveKey } from "../../src/invoice/key.js";
import { chunkSizesArb, damagedArb, invoicesArb } from "./arbitraries.js";
import { layoutArb, WRITERS, type Written } from "./file-writers.js";
import { bytesOf, canonical, ns, plain, readAll, UUID } from "./read-helpers.js";

const FORMATS: readonly FileFormat[] = ["csv", "ndjson", "json"];
const RUNS = { numRuns: 150 } as const;

const writtenArb = (format: FileFormat): fc.Arbitrary<Written> =>
  fc.tuple(invoicesArb, layoutArb).map(([rows, layout]) => WRITERS[format](rows, layout));

/** What must hold of any read, whatever the input: the shape of the item sequence. */
function checkInvariants(format: FileFormat, items: readonly ReadItem[]): void {
  const fileErrors = items.filter((item) => item.kind === "file-error");
  expect(fileErrors.length).toBeLessThanOrEqual(1);
  if (fileErrors.length === 1) expect(items.at(-1)?.kind).toBe("file-error");
  const unknown = items.filter((item) => item.kind === "unknown-fields");
  expect(unknown.length).toBeLessThanOrEqual(1);
  if (unknown.length === 1) expect(items.at(-1)?.kind).toBe("unknown-fields");

  const seen = new Map<string, { line: number; key: string }>();
  let lastLine = 0;
  for (const item of items) {
    if (item.kind === "file-error") {
      expect(item.error.code).toBe("FILE_UNREADABLE");
      continue;
    }
    if (item.kind === "unknown-fields") {
      expect(item.names.length).toBeGreaterThan(0);
      continue;
    }
    // Records come in file order, one per line (CSV, NDJSON) or per element, counted without gaps (JSON).
    if (format === "json") expect(item.line).toBe(lastLine + 1);
    else expect(item.line).toBeGreaterThan(lastLine);
    lastLine = item.line;
    if (item.kind === "rejected") {
      expect(item.errors.length).toBeGreaterThan(0);
      for (const error of item.errors) expect(error.reason.length).toBeGreaterThan(0);
      continue;
    }
    expect(item.key).toMatch(UUID);
    expect(item.key).toBe(deriveKey(item.invoice, ns));
    const first = seen.get(item.invoice.external_id);
    if (item.kind === "valid") {
      expect(first).toBeUndefined();
      seen.set(item.invoice.external_id, { line: item.line, key: item.key });
    } else if (item.kind === "duplicate") {
      expect(first).toEqual({ line: item.firstLine, key: item.key });
    } else {
      expect(first).toEqual({ line: item.firstLine, key: item.earlierKey });
      expect(item.key).not.toBe(item.earlierKey);
    }
  }
}

describe.each(FORMATS)("%s reader properties", (format) => {
  it("when given any bytes, then it never throws and the items keep their invariants", async () => {
    const bytes = damagedArb(writtenArb(format).map((written) => bytesOf(written.text)));
    await fc.assert(
      fc.asyncProperty(bytes, async (input) => {
        checkInvariants(format, await readAll(input, format));
      }),
      RUNS,
    );
  });

  it("when any bytes are split into any chunks, then the items are the same as when read whole", async () => {
    const bytes = damagedArb(writtenArb(format).map((written) => bytesOf(written.text)));
    await fc.assert(
      fc.asyncProperty(bytes, chunkSizesArb, async (input, sizes) => {
        const whole = plain(await readAll(input, format));
        expect(plain(await readAll(input, format, sizes))).toEqual(whole);
      }),
      RUNS,
    );
  });

  it("when valid invoices are written out in any spelling and layout, then each reads back valid, at its line, with its key", async () => {
    await fc.assert(
      fc.asyncProperty(invoicesArb, layoutArb, chunkSizesArb, async (rows, layout, sizes) => {
        const written = WRITERS[format](rows, layout);
        const items = await readAll(written.text, format, sizes);
        const expected: ReadItem[] = rows.map(([invoice], n) => {
          const canonicalInvoice = canonical({ ...invoice });
          const key = deriveKey(canonicalInvoice, ns);
          return { kind: "valid", line: written.lines[n] ?? -1, invoice: canonicalInvoice, key };
        });
        if (written.extra !== undefined) expected.push({ kind: "unknown-fields", names: [written.extra] });
        expect(items).toEqual(expected);
      }),
      RUNS,
    );
  });
});

describe("key stability across formats", () => {
  it("when the same invoice is written as CSV, NDJSON and JSON, flat or nested, then all three reads give one key", async () => {
    await fc.assert(
      fc.asyncProperty(invoicesArb, layoutArb, async (rows, layout) => {
        const keys = await Promise.all(
          FORMATS.map(async (format) => {
            const items = await readAll(WRITERS[format](rows, layout).text, format);
            return items.flatMap((item) => (item.kind === "valid" ? [item.key] : []));
          }),
        );
        expect(keys[0]).toHaveLength(rows.length);
        expect(keys[1]).toEqual(keys[0]);
        expect(keys[2]).toEqual(keys[0]);
      }),
      { numRuns: 100 },
    );
  });
});
