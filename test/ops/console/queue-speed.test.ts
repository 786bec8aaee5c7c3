import { describe, expect, it } from "vitest";
import { queuePage } from "../../../src/ops/console/queue-page.js";
import { fakeDeploymentView, fakeSendRate } from "../../support/deployment-view.js";

const AT = Date.parse("2026-12-07T02:00:00Z");

describe("the queue page says what limits the night's speed", () => {
  it("when the service holds every process with a Retry-After, then /queue names it with the time, as status does, and the night's end", () => {
    const heldUntil = Date.parse("2026-12-07T02:01:00Z");
    const page = queuePage(
      fakeDeploymentView({
        at: AT,
        queued: 1200,
        waiting: 1200,
        sendRate: fakeSendRate({ heldUntil, phase: "backing-off", fleetAcceptedPerSec: 10 }),
      }),
    ).text;
    expect(page).toContain(
      "Speed limit: the service&#39;s Retry-After: every process waits until 02:01:00 UTC, as the service asked.",
    );
    expect(page).toContain("Night ends: 1200 invoice(s) left: at 10/s accepted they end about 02:02:00 UTC.");
  });

  it("when invoices remain but no job waits and the fleet sends far below its rate, then /queue names the workers", () => {
    const page = queuePage(
      fakeDeploymentView({ at: AT, queued: 30, waiting: 0, sendRate: fakeSendRate({ fleetSentPerSec: 2 }) }),
    ).text;
    expect(page).toContain("Speed limit: the workers: few invoices in hand, none waits on the rate");
  });
});
