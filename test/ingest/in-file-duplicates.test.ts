import { describe, expect, it } from "vitest";
import { FileDedupe } from "../../src/ingest/file-dedupe.js";
import type { ReadItem } from "../../src/ingest/read-item.js";
import { HEADER, keyOf, outline, readAll, record, row } from "./read-helpers.js";

const csv = (...lines: string[]): string => lines.join("\n") + "\n";
const ndjson = (...values: object[]): string => values.map((v) => JSON.stringify(v)).join("\n") + "\n";
const INV1 = { external_id: "INV-1", currency: "EUR", destination_country: "DE", archive_policy: "eu-10y" };

function at(items: readonly ReadItem[], index: number): ReadItem {
  const item = items[index];
  if (item === undefined) throw new Error(`no item ${index}: ${outline(items).join(" ")}`);
  return item;
}

describe("in-file duplicates and conflicts", () => {
  it("when a record repeats exactly, then the repeat is a duplicate of the first, with the same key and firstLine", async () => {
    const items = await readAll(csv(HEADER, row("INV-1"), row("INV-2"), row("INV-1")), "csv");
    expect(outline(items)).toEqual(["valid@2", "valid@3", "duplicate@4"]);
    expect(at(items, 2)).toMatchObject({ kind: "duplicate", line: 4, firstLine: 2, key: keyOf(INV1) });
    expect(at(items, 0)).toMatchObject({ kind: "valid", key: keyOf(INV1) });
  });

  it("when a repeat differs only in case, padding and shape, then it is still a duplicate", async () => {
    const items = await readAll(
      ndjson(record("INV-1"), {
        external_id: " INV-1",
        currency: "eur",
        destination_country: "de",
        archive_policy: "EU-10Y",
      }),
      "ndjson",
    );
    expect(items).toEqual([
      expect.objectContaining({ kind: "valid", line: 1 }),
      expect.objectContaining({ kind: "duplicate", line: 2, firstLine: 1, key: keyOf(INV1) }),
    ]);
  });

  it("when the same external_id comes with other content, then it is a conflict naming the earlier key and line", async () => {
    const items = await readAll(csv(HEADER, row("INV-1"), row("INV-1", "USD"), row("INV-1")), "csv");
    expect(outline(items)).toEqual(["valid@2", "conflict@3", "duplicate@4"]);
    const conflict = at(items, 1);
    expect(conflict).toMatchObject({ kind: "conflict", firstLine: 2, earlierKey: keyOf(INV1) });
    expect(conflict.kind === "conflict" ? conflict.key : "").toBe(keyOf({ ...INV1, currency: "USD" }));
    expect(at(items, 2)).toMatchObject({ kind: "duplicate", firstLine: 2 });
  });

  it("when a third version of an id arrives, then it is compared with the first one, not the conflicting one", async () => {
    const items = await readAll(csv(HEADER, row("INV-1"), row("INV-1", "USD"), row("INV-1", "USD")), "csv");
    expect(outline(items)).toEqual(["valid@2", "conflict@3", "conflict@4"]);
    expect(at(items, 2)).toMatchObject({ firstLine: 2, earlierKey: keyOf(INV1) });
  });

  it("when a JSON array repeats a record, then firstLine is the element index of the first", async () => {
    const items = await readAll(JSON.stringify([record("INV-9"), record("INV-1"), record("INV-1")]), "json");
    expect(at(items, 2)).toMatchObject({ kind: "duplicate", line: 3, firstLine: 2 });
  });

  it("when an earlier record with the id was rejected, then the later valid one is neither duplicate nor conflict", async () => {
    const items = await readAll(csv(HEADER, row("INV-1", "XXX"), row("INV-1")), "csv");
    expect(outline(items)).toEqual(["rejected@2", "valid@3"]);
  });

  it("when ids differ only in case, then they are different invoices", async () => {
    const items = await readAll(csv(HEADER, row("inv-1"), row("INV-1")), "csv");
    expect(outline(items)).toEqual(["valid@2", "valid@3"]);
  });
});

describe("FileDedupe", () => {
  const key = (n: number): string => `${n.toString(16).padStart(8, "0")}-0000-5000-8000-${"f".repeat(12)}`;

  it("when tens of thousands of ids are recorded, then each is first once and later found with its line", () => {
    const dedupe = new FileDedupe();
    const count = 50_000;
    const kinds = new Set<string>();
    for (let n = 0; n < count; n++) kinds.add(dedupe.check(`ID-${n}`, key(n), n + 2).kind);
    expect([...kinds]).toEqual(["first"]);
    expect(dedupe.size).toBe(count);
    for (let n = 0; n < count; n += 997) {
      expect(dedupe.check(`ID-${n}`, key(n), 1_000_000)).toEqual({ kind: "duplicate", firstLine: n + 2 });
    }
    expect(dedupe.check("ID-123", key(7), 9)).toEqual({
      kind: "conflict",
      firstLine: 125,
      earlierKey: key(123),
    });
    expect(dedupe.size).toBe(count);
  });

  it("when a conflict is found, then earlierKey is the earlier UUID exactly, in lower case", () => {
    const dedupe = new FileDedupe();
    const earlier = "ffffffff-0000-5abc-8def-0123456789ab";
    dedupe.check("X", earlier, 4);
    expect(dedupe.check("X", "00000000-0000-5000-8000-000000000000", 5)).toEqual({
      kind: "conflict",
      firstLine: 4,
      earlierKey: earlier,
    });
  });

  it("when ids are empty, unicode or very long, then they are told apart", () => {
    const dedupe = new FileDedupe();
    const ids = ["", " ", "😀", "\u{1F600}x", "x".repeat(10_000), `${"x".repeat(9_999)}y`, "é", "e\u0301"];
    ids.forEach((id, n) => {
      expect(dedupe.check(id, key(n), n + 1)).toEqual({ kind: "first" });
    });
    ids.forEach((id, n) => {
      expect(dedupe.check(id, key(n), 99)).toEqual({ kind: "duplicate", firstLine: n + 1 });
    });
  });
});
