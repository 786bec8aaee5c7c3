import { describe, expect, it } from "vitest";
import { parseRateState, STATE_AHEAD_MS } from "../../src/submit/rate-state.js";

const NOW = 1_800_000_002_000;
const GOOD = {
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

describe("the learned rate's state as stored", () => {
  it("when the budget holds a state, then every field a pacer wrote is read back, the rate a probe reached among them", () => {
    expect(parseRateState(JSON.stringify(GOOD), NOW)).toEqual(GOOD);
  });

  it("when the budget holds something else (not JSON, a field missing or of another type), then nothing is read", () => {
    expect(parseRateState("{not json", NOW)).toBeUndefined();
    expect(parseRateState("", NOW)).toBeUndefined();
    expect(parseRateState(JSON.stringify({ version: 1, rate: 100, at: 0, max: 0 }), NOW)).toBeUndefined();
    expect(
      parseRateState(JSON.stringify({ version: 1, rate: "100", at: 0, max: 0, refusingSince: 0 }), NOW),
    ).toBeUndefined();
  });

  it("when a field is out of range (a rate not above 0, a negative plateau, a version that is no count), then nothing is read", () => {
    for (const bad of [
      { rate: 0 },
      { rate: -5 },
      { max: -1 },
      { version: 1.5 },
      { estimates: [300, 0] },
      { reached: -1 },
    ])
      expect(parseRateState(JSON.stringify({ ...GOOD, ...bad }), NOW), JSON.stringify(bad)).toBeUndefined();
    // JSON has no Infinity: a rate too large to be one reads as null
    expect(parseRateState(JSON.stringify({ ...GOOD, rate: Infinity }), NOW)).toBeUndefined();
  });

  it("when a time is dated ahead of the server's clock by more than a round trip could explain, then nothing is read", () => {
    for (const field of ["at", "refusingSince", "cutAt", "returnedAt"]) {
      const ahead = { ...GOOD, [field]: NOW + 5 * 60_000 };
      expect(parseRateState(JSON.stringify(ahead), NOW), field).toBeUndefined();
    }
    const justAhead = { ...GOOD, at: NOW + STATE_AHEAD_MS };
    expect(parseRateState(JSON.stringify(justAhead), NOW)).toEqual(justAhead);
  });
});
