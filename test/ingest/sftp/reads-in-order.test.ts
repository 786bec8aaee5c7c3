import { describe, expect, it } from "vitest";
import { readsInOrder } from "../../../src/ingest/sftp/reads-in-order.js";

/** Reads answered only when the test says, each by piece; records how many were under way at most. */
function server() {
  const waiting = new Map<number, { answer: (v: string) => void; fail: (e: Error) => void }>();
  const started: number[] = [];
  let most = 0;
  const read = (piece: number) =>
    new Promise<string>((resolve, reject) => {
      started.push(piece);
      waiting.set(piece, {
        answer: (v) => {
          waiting.delete(piece);
          resolve(v);
        },
        fail: (e) => {
          waiting.delete(piece);
          reject(e);
        },
      });
      most = Math.max(most, waiting.size);
    });
  const one = (piece: number) => {
    const w = waiting.get(piece);
    if (w === undefined) throw new Error(`piece ${piece} is not under way`);
    return w;
  };
  return {
    read,
    started,
    most: () => most,
    underWay: () => [...waiting.keys()].sort((a, b) => a - b),
    answer: (piece: number) => {
      one(piece).answer(`p${piece}`);
    },
    fail: (piece: number) => {
      one(piece).fail(new Error(`read ${piece} failed`));
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("reads of a file's pieces, a window at a time, used in order", () => {
  it("when the answers come back in reverse order, then each piece is used in piece order and never more than the window is under way", async () => {
    const s = server();
    const used: string[] = [];
    const reading = readsInOrder(7, 3, s.read, (r) => used.push(r) > 0);
    await settle();
    expect(s.underWay()).toEqual([0, 1, 2]);
    for (const piece of [2, 1, 0, 4, 3, 6, 5]) {
      while (!s.underWay().includes(piece)) await settle();
      s.answer(piece);
      await settle();
    }
    expect(await reading).toBeUndefined();
    expect(used).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
    expect(s.most()).toBe(3);
  });

  it("when a piece is not to be used, then the reads under way are waited for, no later read is started, and the piece it stopped at is returned", async () => {
    const s = server();
    let done = false;
    const reading = readsInOrder(10, 3, s.read, (r) => r !== "p1").then((end) => {
      done = true;
      return end;
    });
    await settle();
    s.answer(0);
    await settle();
    s.answer(1);
    await settle();
    expect(s.underWay()).toEqual([2, 3]);
    expect(done).toBe(false);
    s.answer(2);
    s.answer(3);
    expect(await reading).toEqual({ stoppedAt: "p1" });
    expect(s.started).toEqual([0, 1, 2, 3]);
  });

  it("when a read fails, then the whole fails with its error", async () => {
    const s = server();
    const reading = readsInOrder(4, 2, s.read, () => true);
    await settle();
    s.fail(0);
    await expect(reading).rejects.toThrow("read 0 failed");
  });
});
