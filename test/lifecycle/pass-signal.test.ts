import { describe, expect, it } from "vitest";
import { endedBy, passSignal } from "../../src/lifecycle/pass-signal.js";

describe("a pass's one signal", () => {
  it("when the deadline comes first, then the signal is aborted then and says it was the deadline", async () => {
    const stop = new AbortController();
    const signal = passSignal(stop.signal, Date.now() + 50);
    expect(signal.aborted).toBe(false);
    await new Promise((resolve) => {
      signal.addEventListener("abort", resolve, { once: true });
    });
    expect(endedBy(signal)).toBe("the pass's --deadline");
  });

  it("when a signal to stop comes before the deadline, then the pass's signal is aborted at once and names it", () => {
    const stop = new AbortController();
    const signal = passSignal(stop.signal, Date.now() + 60_000);
    stop.abort("SIGTERM");
    expect(signal.aborted).toBe(true);
    expect(endedBy(signal)).toBe("a signal to stop (SIGTERM)");
  });

  it("when the deadline has passed already, then the signal is aborted as the pass begins to wait", async () => {
    const signal = passSignal(new AbortController().signal, Date.now() - 1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(signal.aborted).toBe(true);
    expect(endedBy(signal)).toBe("the pass's --deadline");
  });
});
