import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatOf,
  readInvoiceFile,
  readInvoices,
  type FileFormat,
} from "../../src/ingest/read-invoice-file.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import { fileErrorOf, HEADER, ns, outline, record, row } from "./read-helpers.js";

async function collect(items: AsyncIterable<ReadItem>): Promise<ReadItem[]> {
  const out: ReadItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "invoice-relay-read-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function dropped(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const ROWS = `${HEADER}\n${row("INV-1")}\n${row("INV-2")}\n`;
const NDJSON = `${JSON.stringify(record("INV-1"))}\n${JSON.stringify(record("INV-2"))}\n`;
const JSON_ARRAY = JSON.stringify([record("INV-1"), record("INV-2")]);

describe("readInvoiceFile", () => {
  it.each([
    ["a.csv", ROWS, ["valid@2", "valid@3"]],
    ["b.CSV", ROWS, ["valid@2", "valid@3"]],
    ["c.ndjson", NDJSON, ["valid@1", "valid@2"]],
    ["d.jsonl", NDJSON, ["valid@1", "valid@2"]],
    ["e.json", JSON_ARRAY, ["valid@1", "valid@2"]],
  ])("when %s is read from disk, then its extension picks the format", async (name, text, expected) => {
    const items = await collect(readInvoiceFile(await dropped(name, text), { namespace: ns }));
    expect(outline(items)).toEqual(expected);
  });

  it("when a format is given, then it overrides the extension", async () => {
    const path = await dropped("rows.txt", NDJSON);
    expect(outline(await collect(readInvoiceFile(path, { namespace: ns, format: "ndjson" })))).toEqual([
      "valid@1",
      "valid@2",
    ]);
  });

  it("when the file cannot be used, then the file-error names the file by its base name or the display name", async () => {
    const path = await dropped("broken.json", "[{");
    expect(fileErrorOf(await collect(readInvoiceFile(path, { namespace: ns }))).error.message).toMatch(
      /^broken\.json \(/,
    );
    const named = await collect(readInvoiceFile(path, { namespace: ns, displayName: "night-1/broken.json" }));
    expect(fileErrorOf(named).error.file).toBe("night-1/broken.json");
  });

  it("when the file does not exist, then the reader ends with a file-error instead of throwing", async () => {
    const items = await collect(readInvoiceFile(join(dir, "missing.csv"), { namespace: ns }));
    expect(items).toHaveLength(1);
    expect(fileErrorOf(items).error.problem).toContain("could not be read");
  });

  it.each([
    ["x.csv", "csv"],
    ["x.Json", "json"],
    ["x.ndjson", "ndjson"],
    ["x.JSONL", "ndjson"],
    ["x.csv.tmp", undefined],
    ["x.part", undefined],
    ["x.txt", undefined],
    [".csv", undefined],
  ])("when the file is named %s, then formatOf says %s", (name, format) => {
    expect(formatOf(name)).toBe(format);
  });
});

describe("streaming", () => {
  /** A file of 100,000 records (megabytes), made as it is read; counts the bytes handed out and whether it was closed. */
  function long(format: FileFormat): {
    source: AsyncGenerator<Uint8Array>;
    pulled: () => number;
    closed: () => boolean;
  } {
    let bytes = 0;
    let closed = false;
    const encoder = new TextEncoder();
    async function* source(): AsyncGenerator<Uint8Array> {
      try {
        const prefix = format === "csv" ? `${HEADER}\n` : format === "json" ? '{"invoices": [' : "";
        yield await Promise.resolve(encoder.encode(prefix));
        for (let n = 0; n < 100_000; n++) {
          const text =
            format === "csv"
              ? `${row(`INV-${n}`)}\n`
              : format === "json"
                ? `${n === 0 ? "" : ","}${JSON.stringify(record(`INV-${n}`))}`
                : `${JSON.stringify(record(`INV-${n}`))}\n`;
          const chunk = encoder.encode(text);
          bytes += chunk.length;
          yield chunk;
        }
        if (format === "json") yield encoder.encode("]}");
      } finally {
        closed = true;
      }
    }
    return { source: source(), pulled: () => bytes, closed: () => closed };
  }

  it.each(["csv", "ndjson", "json"] as const)(
    "when a long %s file is read, then records come out as bytes come in, and stopping early closes the source",
    async (format) => {
      const file = long(format);
      const items: ReadItem[] = [];
      for await (const item of readInvoices(file.source, { namespace: ns, format, displayName: "endless" })) {
        items.push(item);
        if (items.length === 1000) break;
      }
      expect(new Set(items.map((item) => item.kind))).toEqual(new Set(["valid"]));
      expect(file.pulled()).toBeLessThan(200 * 1000);
      expect(file.closed()).toBe(true);
    },
  );

  it("when the byte source fails part way, then the records so far are kept and a file-error ends the items", async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield await Promise.resolve(new TextEncoder().encode(NDJSON));
      throw new Error("EIO: disk went away");
    }
    const items = await collect(
      readInvoices(failing(), { namespace: ns, format: "ndjson", displayName: "f.ndjson" }),
    );
    expect(outline(items)).toEqual(["valid@1", "valid@2", "file-error"]);
    expect(fileErrorOf(items).error.problem).toBe("could not be read: EIO: disk went away");
  });
});
