import { describe, expect, it } from "vitest";
import { isBatchId, newBatchId } from "../../src/ledger/batch-id.js";

describe("batch ids", () => {
  it("when a pass claims 20,000 files within one second, then every one gets an id of its own, of the documented shape", () => {
    const now = new Date("2026-11-21T02:00:00.250Z");
    const ids = Array.from({ length: 20_000 }, () => newBatchId(now));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every(isBatchId)).toBe(true);
    expect(ids[0]?.startsWith("20261121T020000Z-")).toBe(true);
  });
});
