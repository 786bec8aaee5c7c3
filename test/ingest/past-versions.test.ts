import { describe, expect, it } from "vitest";
import { pastVersionsToRestore } from "../../src/ingest/past-versions.js";
import type { PastRecord } from "../../src/ledger/past-record.js";

const KEYS = {
  row: "00000000-0000-5000-8000-000000000001",
  earlier: "00000000-0000-5000-8000-000000000002",
  older: "00000000-0000-5000-8000-000000000003",
};
const row = { line: 7, key: KEYS.row, externalId: "INV-1" };
const version = (key: string, status: PastRecord["status"], lastAttemptAt: number): PastRecord => ({
  key,
  externalId: "INV-1",
  status,
  attempts: 1,
  lastAttemptAt,
});

describe("which past versions decide a chunk's rows", () => {
  it("when the row's own key succeeded, then only that record is restored, for the row's line", () => {
    const own = version(KEYS.row, "succeeded", 5);
    expect(pastVersionsToRestore([row], [own, version(KEYS.earlier, "failed", 9)])).toEqual([
      { ...own, line: 7 },
    ]);
  });

  it("when another version succeeded, then it is restored rather than a failed one, so the row is a conflict", () => {
    const earlier = version(KEYS.earlier, "succeeded", 5);
    expect(pastVersionsToRestore([row], [version(KEYS.older, "failed", 9), earlier])).toEqual([
      { ...earlier, line: 7 },
    ]);
  });

  it("when other versions only failed, then the one answered last is restored, for the row to supersede", () => {
    const last = version(KEYS.earlier, "failed", 9);
    expect(pastVersionsToRestore([row], [version(KEYS.older, "failed", 5), last])).toEqual([
      { ...last, line: 7 },
    ]);
  });

  it("when only the row's own key failed, then nothing is restored and the row is sent as new", () => {
    expect(pastVersionsToRestore([row], [version(KEYS.row, "failed", 5)])).toEqual([]);
  });

  it("when PostgreSQL knows nothing of the rows, then nothing is restored", () => {
    expect(pastVersionsToRestore([row], [])).toEqual([]);
  });
});
