import { describe, expect, it } from "vitest";
import { NEXT_SCAN } from "../../src/lifecycle/pass-signal.js";
import { readLeftSince, readOf, ScanReads } from "../../src/ingest/reads-under-way.js";

/** A read held open until `end` is called, telling of bytes through `deliver`. */
function heldRead(path: string, scan: ScanReads | undefined) {
  const read = readOf(path, scan);
  let deliver: (bytes: number) => void = () => undefined;
  let end = (): void => undefined;
  const done = read.during(
    (delivered) =>
      new Promise<void>((resolve) => {
        deliver = delivered;
        end = resolve;
      }),
  );
  return {
    cut: read.cut,
    deliver: (bytes: number) => {
      deliver(bytes);
    },
    end: () => {
      end();
      return done;
    },
  };
}

describe("reads of claimed files under way in a scan of start", () => {
  it("when a read delivers bytes between each time another scan falls due, then it is never cut, however many fall due", async () => {
    const scan = new ScanReads();
    const slow = heldRead("/drop/processing/b--slow.csv", scan);
    for (let due = 0; due < 5; due++) {
      slow.deliver(64 * 1024);
      scan.due();
    }
    expect(slow.cut?.aborted).toBe(false);
    await slow.end();
  });

  it("when a read delivers nothing from one time a scan falls due to the next, then it is cut for the next scan, and it is left under way to a later scan only", async () => {
    const first = new ScanReads();
    const path = "/drop/processing/a--hung.csv";
    const hung = heldRead(path, first);
    first.due();
    expect(hung.cut?.aborted).toBe(false); // begun just before: nothing owed yet
    // A read of the same file by the same scan (an SFTP source's pulled file, beside the drop pass).
    expect(readLeftSince(path, first)).toBeUndefined();
    first.due();
    expect(hung.cut?.reason).toBe(NEXT_SCAN);
    const later = new ScanReads();
    expect(readLeftSince(path, later)).toBeTypeOf("number");
    await hung.end();
    expect(readLeftSince(path, later)).toBeUndefined();
  });

  it("when a read of a file by no scan (an SFTP source checking its pulled copy) is under way, then no scan takes it for one left under way, and it is never cut", async () => {
    const path = "/drop/processing/c--healthy.csv";
    const outside = heldRead(path, undefined);
    const scan = new ScanReads();
    scan.due();
    scan.due();
    expect(outside.cut).toBeUndefined();
    expect(readLeftSince(path, scan)).toBeUndefined();
    await outside.end();
  });
});
