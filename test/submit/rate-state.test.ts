import { describe, expect, it } from "vitest";
import { parseRateState } from "../../src/submit/rate-state.js";

describe("the learned rate's state as stored", () => {
  it("when the budget holds a state, then every field a pacer wrote is read back, the rate a probe reached among them", () => {
    const state = {
      version: 4,
      rate: 270,
      at: 1_800_000_000_000,
      max: 300,
      refusingSince: 0,
      estimates: [290, 300],
      cutAt: 1_800_000_000_000,
      returnedAt: 1_800_000_001_000,
      reached: 4000,
    };
    expect(parseRateState(JSON.stringify(state))).toEqual(state);
  });

  it("when the budget holds something else (not JSON, a field missing or of another type), then nothing is read", () => {
    expect(parseRateState("{not json")).toBeUndefined();
    expect(parseRateState(JSON.stringify({ version: 1, rate: 100, at: 0, max: 0 }))).toBeUndefined();
    expect(
      parseRateState(JSON.stringify({ version: 1, rate: "100", at: 0, max: 0, refusingSince: 0 })),
    ).toBeUndefined();
  });
});
