import { describe, expect, it } from "vitest";
import { sendingInWords } from "../../src/queue/sending-words.js";

describe("the fleet's sending in words (status, console)", () => {
  it("when no limit was met and nothing is sent, then there is nothing to say, whatever rate was probed", () => {
    expect(sendingInWords({ phase: "probing", learnedPerSec: 100, fleetSentPerSec: 0 })).toBeUndefined();
  });

  it("when no limit was met, then it says how fast the fleet sends and that the service set no limit, not the rate probed", () => {
    const words = sendingInWords({ phase: "probing", learnedPerSec: 100, fleetSentPerSec: 16 }) ?? "";
    expect(words).toBe("16/s sent lately (every process together); no limit from the service met");
  });

  it("when the fleet holds under a capacity it learned, then it says the service is what sets the pace", () => {
    expect(sendingInWords({ phase: "holding", learnedPerSec: 43.64, fleetSentPerSec: 41.2 })).toBe(
      "41.2/s sent lately (every process together), held at 43.6/s: just under the capacity the service showed (429)",
    );
  });

  it("when the service refuses for capacity, then it says the fleet slowed and why", () => {
    expect(sendingInWords({ phase: "backing-off", learnedPerSec: 5, fleetSentPerSec: 9 })).toMatch(
      /slowed to 5\/s: the service refuses for capacity \(429\)/,
    );
  });
});
