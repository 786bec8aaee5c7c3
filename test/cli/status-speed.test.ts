import { describe, expect, it } from "vitest";
import { statusReport } from "../../src/cli/status-report.js";
import { statusText } from "../../src/cli/status-text.js";
import { fakeDeploymentView, fakeSendRate } from "../support/deployment-view.js";

const AT = Date.parse("2026-12-07T02:00:00Z");
const CAPACITY_WORDS =
  "the service's capacity: about 42/s, learned from its refusals, which rose with the rate (0 of 25 cut(s) " +
  "this pass came below the rate it had accepted); cut last at 01:55:10 UTC; the rate is 40/s";

function statusOf(view: ReturnType<typeof fakeDeploymentView>) {
  return statusReport({
    prefix: "acme",
    retentionMs: 86_400_000,
    now: AT,
    view,
    metas: [],
    size: { bytes: undefined, redisUsedMemory: undefined },
    database: null,
  });
}

describe("status says what limits the night's speed", () => {
  it("when refusals cut the rate during a run with a deadline, then status names the service's capacity since the cut, and the end against the deadline", () => {
    const cutAt = Date.parse("2026-12-07T01:55:10Z");
    const view = fakeDeploymentView({
      at: AT,
      queued: 40 * 3600,
      waiting: 900,
      sendRate: fakeSendRate({ phase: "holding", plateauPerSec: 42, cutAt, learnedPerSec: 40, cuts: 25 }),
      passes: [
        {
          id: "p1",
          kind: "run",
          startedAt: AT - 600_000,
          batches: [],
          invoices: {},
          deadline: AT + 1_800_000,
        },
      ],
    });
    const report = statusOf(view);
    expect(report.speed).toEqual({
      limit: "service",
      since: "2026-12-07T01:55:10.000Z",
      until: null,
      words: CAPACITY_WORDS,
      ends_at: "2026-12-07T03:00:00.000Z",
      deadline: "2026-12-07T02:30:00.000Z",
      end_words: expect.stringMatching(/30 min after the --deadline at 02:30:00 UTC/) as unknown,
    });
    const text = statusText(report);
    expect(text).toContain(`speed limit            ${CAPACITY_WORDS}\n`);
    expect(text).toContain(
      "night ends             144000 invoice(s) left: at 40/s accepted they end about 03:00:00 UTC, 30 min after the --deadline",
    );
  });

  it("when the rate sits at SUBMIT_RATE_PER_SEC and no deadline is known, then status names the ceiling and only the end", () => {
    const view = fakeDeploymentView({
      at: AT,
      queued: 600,
      waiting: 500,
      sendRate: fakeSendRate({
        learnedPerSec: 20,
        ceilingPerSec: 20,
        fleetSentPerSec: 20,
        fleetAcceptedPerSec: 20,
      }),
    });
    const text = statusText(statusOf(view));
    expect(text).toContain("speed limit            SUBMIT_RATE_PER_SEC: the rate sits at its ceiling, 20/s");
    expect(text).toContain(
      "night ends             600 invoice(s) left: at 20/s accepted they end about 02:00:30 UTC\n",
    );
  });
});
