import { describe, expect, it } from "vitest";
import { RECOVER_MS } from "../../src/capacity/index.js";
import { TimeInHand } from "../../src/queue/time-in-hand.js";

describe("the time an invoice is in hand", () => {
  it("when no invoice was handled yet, then it is K, the time in which the learned rate moves", () => {
    expect(new TimeInHand(() => 5_000).ms).toBe(RECOVER_MS);
  });

  it("when invoices were handled, then it is the longest of this window of K and the one before, and a window older than that is forgotten", () => {
    let now = 10_000;
    const times = new TimeInHand(() => now);
    times.handled(40);
    times.handled(120);
    times.handled(60);
    expect(times.ms).toBe(120);
    now += RECOVER_MS; // the next window: the one before still counts
    times.handled(30);
    expect(times.ms).toBe(120);
    now += RECOVER_MS; // two windows on: only the last one's
    times.handled(50);
    expect(times.ms).toBe(50);
    now += 3 * RECOVER_MS; // nothing handled for longer than two windows: K again
    expect(times.ms).toBe(RECOVER_MS);
  });
});
