import { describe, expect, it } from "vitest";
import { CallBatcher } from "../../src/ledger/call-batcher.js";

/** A batcher whose runs are recorded: it answers each input doubled. */
function doubling(maxBatch?: number) {
  const runs: number[][] = [];
  const batcher = new CallBatcher<number, number>((inputs) => {
    runs.push([...inputs]);
    return Promise.resolve(inputs.map((n) => n * 2));
  }, maxBatch);
  return { batcher, runs };
}

describe("call batcher", () => {
  it("when calls are made in the same turn, then they run as one batch and each gets its own result", async () => {
    const { batcher, runs } = doubling();
    const results = await Promise.all([1, 2, 3].map((n) => batcher.call(n)));
    expect(results).toEqual([2, 4, 6]);
    expect(runs).toEqual([[1, 2, 3]]);
  });

  it("when calls are made in different turns, then each turn is a batch of its own", async () => {
    const { batcher, runs } = doubling();
    const first = batcher.call(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = batcher.call(2);
    expect(await Promise.all([first, second])).toEqual([2, 4]);
    expect(runs).toEqual([[1], [2]]);
  });

  it("when more calls wait than the batch limit, then full batches run at once and the rest at the end of the turn", async () => {
    const { batcher, runs } = doubling(2);
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.call(n)));
    expect(results).toEqual([2, 4, 6, 8, 10]);
    expect(runs).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("when a batch's run fails, then every call of that batch fails with its error and the next batch runs", async () => {
    let fail = true;
    const batcher = new CallBatcher<number, number>((inputs) =>
      fail ? Promise.reject(new Error("Redis went away")) : Promise.resolve(inputs.map((n) => n + 1)),
    );
    const failed = await Promise.allSettled([batcher.call(1), batcher.call(2)]);
    expect(failed.map((r) => (r.status === "rejected" ? String(r.reason) : "fulfilled"))).toEqual([
      "Error: Redis went away",
      "Error: Redis went away",
    ]);
    fail = false;
    expect(await batcher.call(3)).toBe(4);
  });

  it("when a run answers fewer results than calls, then every call fails instead of getting another's result", async () => {
    const batcher = new CallBatcher<number, number>(() => Promise.resolve([1]));
    const settled = await Promise.allSettled([batcher.call(1), batcher.call(2)]);
    expect(settled.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/batch of 2 calls came back with 1/);
  });
});
