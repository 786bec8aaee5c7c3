import { describe, expect, it } from "vitest";
import { sendingInWords } from "../../src/queue/sending-words.js";

describe("the fleet's sending in words (status, console)", () => {
  it("when no limit was met and nothing is sent, then there is nothing to say, whatever rate was probed", () => {
    expect(sendingInWords({ phase: "probing", learnedPerSec: 100, fleetSentPerSec: 0 })).toBeUndefined();
  });

  it("when no limit was met, then it says how fast the fleet sends and that it is finding the service's speed, not the rate probed", () => {
    const words = sendingInWords({ phase: "probing", learnedPerSec: 100, fleetSentPerSec: 16 }) ?? "";
    expect(words).toBe("16/s sent lately (every process together); finding the service's speed");
  });

  it("when the fleet holds under a capacity it learned, then it says it is at the service's speed", () => {
    expect(sendingInWords({ phase: "holding", learnedPerSec: 43.64, fleetSentPerSec: 41.2 })).toBe(
      "41.2/s sent lately (every process together): at the service's speed, held at 43.6/s",
    );
  });

  it("when the service refuses for capacity, then it says the fleet slowed and why", () => {
    expect(sendingInWords({ phase: "backing-off", learnedPerSec: 5, fleetSentPerSec: 9 })).toMatch(
      /slowed to 5\/s: the service refuses for capacity/,
    );
  });

  it("when the service holds the fleet with a Retry-After, then it says until when", () => {
    const heldUntil = Date.UTC(2026, 10, 27, 2, 14, 5);
    expect(sendingInWords({ phase: "backing-off", learnedPerSec: 5, fleetSentPerSec: 0, heldUntil })).toMatch(
      /held by the service until 02:14:05 UTC \(Retry-After\)/,
    );
  });

  it("when SUBMIT_CONCURRENCY caps the sending, then it says so and what to do", () => {
    expect(
      sendingInWords({
        phase: "probing",
        learnedPerSec: 900,
        fleetSentPerSec: 80,
        cappedByConcurrency: true,
      }),
    ).toMatch(/SUBMIT_CONCURRENCY caps .*raise it/);
  });
});
