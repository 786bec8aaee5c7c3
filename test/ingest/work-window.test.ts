import { describe, expect, it } from "vitest";
import { WorkWindow } from "../../src/ingest/work-window.js";

/** Work that finishes when told to, counting how many run at once. */
function gate() {
  let running = 0;
  let most = 0;
  const releases: (() => void)[] = [];
  const work = () => {
    running++;
    most = Math.max(most, running);
    return new Promise<void>((resolve) => {
      releases.push(() => {
        running--;
        resolve();
      });
    });
  };
  return { work, releases, most: () => most };
}

describe("work window", () => {
  it("when more work is started than the limit, then the next waits until the oldest is done", async () => {
    const g = gate();
    const window = new WorkWindow(2);
    await window.start(g.work);
    await window.start(g.work);
    let third = false;
    const starting = window.start(g.work).then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve)); // every pending promise step has run
    expect(third).toBe(false);
    g.releases[0]?.();
    await starting;
    expect(third).toBe(true);
    for (const release of g.releases.slice(1)) release();
    await window.settle();
    expect(g.most()).toBe(2);
  });

  it("when work fails while later work is under way, then settle raises that failure, not an unhandled rejection", async () => {
    const window = new WorkWindow(3);
    await window.start(() => Promise.reject(new Error("register failed")));
    await window.start(() => Promise.resolve());
    await expect(window.settle()).rejects.toThrow("register failed");
  });
});
