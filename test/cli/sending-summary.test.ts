import { describe, expect, it } from "vitest";
import { SendingSummary } from "../../src/cli/sending-summary.js";
import type { AttemptObservation, PacerSnapshot } from "../../src/queue/submission-service.js";

function snapshot(over: Partial<PacerSnapshot> = {}): PacerSnapshot {
  return {
    rate: 100,
    phase: "probing",
    fleetSentPerSec: 16,
    fleetAcceptedPerSec: 16,
    refusingSince: 0,
    fleetRefused: 0,
    heldUntil: 0,
    capped: false,
    ...over,
  };
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

  it("when some requests were refused for capacity, then it counts every one this run received, though the fleet's count lags", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot({ fleetRefused: 5 }));
    for (const attempt of [notNow, accepted, notNow, accepted]) sending.attempted(attempt);
    sending.observe(snapshot({ fleetRefused: 6 }));
    const said = sending.summary() ?? "";
    expect(said).toContain("2 of this run's requests were refused for capacity");
    expect(said).not.toMatch(/requests\/s|learned/);
  });

  it("when the learned rate stands far above what the service took, then the figure is what it accepted, never the learned rate", () => {
    const sending = new SendingSummary();
    for (const fleetAcceptedPerSec of [290, 300, 310])
      sending.observe(snapshot({ rate: 1323, phase: "holding", fleetSentPerSec: 400, fleetAcceptedPerSec }));
    const said = sending.summary() ?? "";
    expect(said).toMatch(/the service took about 300 requests\/s/);
    expect(said).not.toContain("1323");
  });

  it("when the service was still refusing for capacity at the end, then it says so", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot({ rate: 5, phase: "backing-off", refusingSince: 1 }));
    expect(sending.summary()).toMatch(/refusing every request for capacity/);
  });

  it("when SUBMIT_CONCURRENCY held the sending below the rate, then it says so and what to do", () => {
    const sending = new SendingSummary();
    sending.observe(snapshot({ capped: true }));
    expect(sending.summary()).toMatch(/SUBMIT_CONCURRENCY held .* raise it/);
  });
});
