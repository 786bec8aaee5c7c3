import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  claimedFiles,
  claimedName,
  dropFolder,
  ensureDropFolder,
  newBatchId,
  parseClaimedName,
  type DropFolder,
} from "../../src/ingest/drop-folder.js";
import { fileName, type FileName } from "../../src/names/file-name.js";
import { segment } from "../support/file-names.js";

/** A Linux file name is any bytes but `/` and NUL, at most 255 of them. */
const NAME_MAX_BYTES = 255;
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

const ODD = [
  "\n",
  "\r",
  "\r\n",
  "\u2028",
  "\u2029",
  "\t",
  " ",
  '"',
  "'",
  "-",
  "--",
  "\\",
  "*",
  "?",
  "[",
  "]",
  ".",
  "é",
  "日本",
  "😀",
  "a",
  "Z",
  "0",
  "\u00a0",
  "\u0085",
  "\u000b",
  "\u000c",
  "$(x)",
  ";",
];

const batchIdArb = fc
  .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
  .map((d) => newBatchId(d));

/** Names built from the characters that break naive parsing, some looking like a claimed name themselves. */
const oddNameArb = fc
  .tuple(
    fc.oneof(
      fc.constant(""),
      batchIdArb.map((id) => `${id}--`),
    ),
    fc.array(fc.constantFrom(...ODD), { minLength: 1, maxLength: 40 }),
    fc.constantFrom(".csv", ".json", ".ndjson", ".jsonl", ""),
  )
  .map(([prefix, parts, ext]) => `${prefix}${parts.join("")}${ext}`)
  // "." and ".." name the folder itself: never a dropped file's name.
  .filter((name) => fileName(name) !== undefined)
  .map(segment);

/** Long names of multi-byte characters, up to the 255-byte limit. */
const longNameArb = fc
  .array(fc.constantFrom("日", "é", "😀", "\n", "a", " "), { minLength: 40, maxLength: 255 })
  .map((parts) => {
    let name = "";
    for (const part of parts) if (bytes(name + part) <= NAME_MAX_BYTES) name += part;
    return segment(name);
  });

describe("claimed names", () => {
  it("when a drop name holds any character a Linux file name may hold, then its claimed name parses back to the same batch id and name", () => {
    fc.assert(
      fc.property(batchIdArb, fc.oneof(oddNameArb, longNameArb), (batchId, name) => {
        expect(parseClaimedName(claimedName(batchId, name))).toEqual({ batchId, name });
      }),
      { numRuns: 2000 },
    );
  });

  it("when a name breaks a line in each of the ways Unicode allows, then its claimed name parses back", () => {
    const batchId = newBatchId(new Date("2026-11-21T02:00:00Z"));
    for (const name of [
      "a\nb.csv",
      "a\rb.csv",
      "a\u2028b.csv",
      "a\u2029b.csv",
      "\ninvoices.csv",
      "invoices.csv\n",
    ].map(segment))
      expect(parseClaimedName(claimedName(batchId, name)), JSON.stringify(name)).toEqual({ batchId, name });
  });

  it("when a name is not a claimed name, then it does not parse", () => {
    for (const name of ["invoices.csv", "20261121T020000Z-3fa9c1-x.csv", "20261121T020000Z-3fa9c1--", ".x"])
      expect(parseClaimedName(name)).toBeUndefined();
  });
});

describe("claimed files in processing/", () => {
  let dir: string;
  let folder: DropFolder;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "invoice-relay-names-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("when files with odd names up to 255 bytes lie claimed in processing/, then every one is found with its batch id and name", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc
          .uniqueArray(
            fc.tuple(batchIdArb, fc.oneof(oddNameArb, longNameArb)).map(([batchId, name]) => {
              // The claimed name itself must fit in one file name.
              let fitted: string = name;
              while (bytes(`${batchId}--${fitted}`) > NAME_MAX_BYTES)
                fitted = Array.from(fitted).slice(0, -1).join(""); // whole code points
              return { batchId, name: fileName(fitted) };
            }),
            { minLength: 1, maxLength: 8, selector: (f) => `${f.batchId}--${f.name ?? ""}` },
          )
          .map((files) =>
            files.flatMap((f) => (f.name === undefined ? [] : [{ batchId: f.batchId, name: f.name }])),
          ),
        async (files) => {
          folder = dropFolder(join(dir, String(run++)));
          await ensureDropFolder(folder);
          for (const f of files)
            await writeFile(join(folder.processing, claimedName(f.batchId, f.name)), "x");
          const found = await claimedFiles(folder);
          expect(found.map(({ batchId, name }) => ({ batchId, name })).sort(byClaimed)).toEqual(
            [...files].sort(byClaimed),
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});

function byClaimed(a: { batchId: string; name: FileName }, b: { batchId: string; name: FileName }): number {
  const [x, y] = [claimedName(a.batchId, a.name), claimedName(b.batchId, b.name)];
  return x < y ? -1 : x > y ? 1 : 0;
}
