import { describe, expect, it } from "vitest";
import { SendingSummary } from "../../src/cli/sending-summary.js";
import type { AttemptObservation, PacerSnapshot } from "../../src/queue/submission-service.js";

function snapshot(over: Partial<PacerSnapshot> = {}): PacerSnapshot {
  return { rate: 100, phase: "probing", fleetSentPerSec: 16, refusingSince: 0, fleetRefused: 0, ...over };
}

const accepted: AttemptObservation = { statusClass: "2xx", retryReason: undefined, seconds: 0.01 };
const notNow: AttemptObservation = { statusClass: "4xx", retryReason: "throttled", seconds: 0.01 };
const unavailable: AttemptObservation = { statusClass: "5xx", retryReason: "server_error", seconds: 0.01 };

describe("the end of run's word on sending", () => {
  it("when the service refused nothing and set no limit, then there is nothing to say", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot());
    for (const attempt of [accepted, accepted, unavailable]) sending.attempted(attempt);
    sending.observe(snapshot({ fleetSentPerSec: 27 }));
    expect(sending.summary()).toBeUndefined();
  });

  it("when some requests were answered 429, then it counts every one this run received, though the fleet's count lags", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot({ fleetRefused: 5 }));
    for (const attempt of [notNow, accepted, notNow, accepted]) sending.attempted(attempt);
    sending.observe(snapshot({ fleetRefused: 6 }));
    const said = sending.summary() ?? "";
    expect(said).toContain("2 of this run's requests were answered 429");
    expect(said).not.toMatch(/requests\/s|learned/);
  });

  it("when the fleet met the service's capacity, then it says at what rate it held its sending", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot({ rate: 40, phase: "backing-off" }));
    sending.attempted(notNow);
    sending.observe(snapshot({ rate: 43.6, phase: "holding" }));
    expect(sending.summary()).toMatch(/held its sending at about 44 requests\/s/);
  });

  it("when the service was still refusing for capacity at the end, then it says so", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot({ rate: 5, phase: "backing-off", refusingSince: 1 }));
    expect(sending.summary()).toMatch(/refusing .*for capacity/);
  });
});
