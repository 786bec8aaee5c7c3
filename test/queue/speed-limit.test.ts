import { describe, expect, it } from "vitest";
import { refusalsVerdict, speedLimit, speedOf, type SpeedFigures } from "../../src/queue/speed-limit.js";
import { fakeSendRate as sending } from "../support/deployment-view.js";

const NOW = Date.parse("2026-12-07T02:00:00Z");

function figures(over: Partial<SpeedFigures> = {}): SpeedFigures {
  return {
    now: NOW,
    sending: sending(),
    remaining: 2400,
    waiting: 500,
    held: 0,
    deadline: undefined,
    paused: false,
    coolDownUntil: undefined,
    ...over,
  };
}

describe("what limits the night's speed", () => {
  it("when Redis does not answer, then Redis is the limit", () => {
    const speed = speedOf(undefined);
    expect(speed.limit).toBe("redis");
    expect(speed.words).toMatch(/^Redis: it does not answer/);
  });

  it("when the queue is paused with invoices left, then the pause is the limit, whatever the rate says", () => {
    const speed = speedLimit(figures({ paused: true, sending: sending({ cappedByConcurrency: true }) }));
    expect(speed.limit).toBe("paused");
    expect(speed.words).toMatch(/^the queue is paused: no worker takes an invoice/);
  });

  it("when the queue is paused after the fleet accepted invoices, then no end is told from the rate before the pause", () => {
    const speed = speedLimit(figures({ paused: true, sending: sending({ fleetAcceptedPerSec: 120 }) }));
    expect(speed.endsAt).toBeUndefined();
    expect(speed.endWords).toBe("2400 invoice(s) left; none accepted lately, so no end can be told");
  });

  it("when an outage cool-down holds every worker, then the cool-down is the limit, until its end", () => {
    const coolDownUntil = NOW + 45_000;
    const speed = speedLimit(figures({ coolDownUntil }));
    expect(speed).toMatchObject({ limit: "cool-down", until: coolDownUntil });
    expect(speed.words).toMatch(/^the outage cool-down: no invoice is taken until 02:00:45 UTC/);
  });

  it("when the service asked every process to wait, then its Retry-After is the limit, until that time", () => {
    const heldUntil = Date.parse("2026-12-07T02:00:30Z");
    const speed = speedLimit(
      figures({ sending: sending({ heldUntil, phase: "backing-off", plateauPerSec: 90 }) }),
    );
    expect(speed).toMatchObject({ limit: "retry-after", until: heldUntil });
    expect(speed.words).toBe(
      "the service's Retry-After: every process waits until 02:00:30 UTC, as the service asked",
    );
  });

  it("when refusals cut the rate only once it was back at the plateau, cut after cut, then the service's capacity is the limit, since the cut, at its plateau", () => {
    const cutAt = Date.parse("2026-12-07T01:55:10Z");
    const bound = { phase: "holding", plateauPerSec: 97.26, cutAt, learnedPerSec: 95 } as const;
    const speed = speedLimit(figures({ sending: sending({ ...bound, cuts: 40, cutsUnder: 1 }) }));
    expect(speed).toMatchObject({ limit: "service", since: cutAt });
    expect(speed.words).toBe(
      "the service's capacity: about 97.3/s, learned from its refusals, which rose with the rate (1 of 40 " +
        "cut(s) this pass came below the rate it had accepted); cut last at 01:55:10 UTC; the rate is 95/s",
    );
  });

  it("when refusals cut the rate below what the service had accepted, cut after cut (refusals at random), then they are named, with their share, and no capacity is claimed", () => {
    const cutAt = Date.parse("2026-12-07T01:59:58Z");
    const random = { phase: "backing-off", plateauPerSec: 4, cutAt, learnedPerSec: 3.6 } as const;
    const since = { answeredSinceCut: 40, refusedSinceCut: 4 };
    const speed = speedLimit(figures({ sending: sending({ ...random, ...since, cuts: 46, cutsUnder: 11 }) }));
    expect(speed).toMatchObject({ limit: "refusals", since: cutAt });
    expect(speed.words).toBe(
      "refusals that came at rates the service had accepted (11 of 46 cut(s) this pass came below the " +
        "rate it had accepted; 10 % of answers since refused): it refuses at random, or its capacity fell; " +
        "they hold the rate at 3.6/s, cut last at 01:59:58 UTC; more workers will not help; if it lasts, " +
        "ask the service's owner why it refuses",
    );
  });

  it("when refusals cut the rate but too few times to tell why, then the rate they allowed is named, not a capacity", () => {
    const cutAt = Date.parse("2026-12-07T01:59:58Z");
    const early = { phase: "holding", plateauPerSec: 300, cutAt, learnedPerSec: 290, cuts: 5 } as const;
    const speed = speedLimit(figures({ sending: sending(early) }));
    expect(speed).toMatchObject({ limit: "refusals", since: cutAt });
    expect(speed.words).toBe(
      "the rate the service's refusals allowed: about 300/s, cut last at 01:59:58 UTC; not shown to be its " +
        "capacity yet (0 of 5 cut(s) this pass came below the rate it had accepted); the rate is 290/s",
    );
  });

  it("when a plateau was learned long ago and the rate probes past it, then the service is not named", () => {
    const speed = speedLimit(
      figures({ sending: sending({ phase: "probing", plateauPerSec: 50, cutAt: NOW - 600_000 }) }),
    );
    expect(speed.limit).not.toBe("service");
  });

  it("when the service refused everything for a minute, then its capacity is the limit since then (a quota spent)", () => {
    const refusingSince = NOW - 90_000;
    const speed = speedLimit(
      figures({ sending: sending({ refusingForCapacity: true, refusingSince, fleetAcceptedPerSec: 0 }) }),
    );
    expect(speed).toMatchObject({ limit: "service", since: refusingSince });
    expect(speed.words).toMatch(/^the service's capacity: it has refused every request since 01:58:30 UTC/);
  });

  it("when the pacer found SUBMIT_CONCURRENCY capping the requests in flight, then it is the limit", () => {
    const speed = speedLimit(figures({ sending: sending({ cappedByConcurrency: true }) }));
    expect(speed.limit).toBe("concurrency");
    expect(speed.words).toMatch(/^SUBMIT_CONCURRENCY: .*; raise it$/);
  });

  it("when a process found SUBMIT_CONCURRENCY below its need but the fleet sends at the rate, then it is not the limit", () => {
    const speed = speedLimit(
      figures({ sending: sending({ cappedByConcurrency: true, fleetSentPerSec: 98, learnedPerSec: 100 }) }),
    );
    expect(speed.limit).not.toBe("concurrency");
  });

  it("when a process found SUBMIT_CONCURRENCY below its need but nothing waits in the queue (a night's last invoices), then it is not the limit", () => {
    const speed = speedLimit(
      figures({
        waiting: 0,
        remaining: 14,
        sending: sending({ cappedByConcurrency: true, fleetSentPerSec: 63 }),
      }),
    );
    expect(speed.limit).not.toBe("concurrency");
  });

  it("when the rate sits at SUBMIT_RATE_PER_SEC, then the ceiling is the limit", () => {
    const speed = speedLimit(
      figures({ sending: sending({ learnedPerSec: 50, ceilingPerSec: 50, fleetSentPerSec: 49 }) }),
    );
    expect(speed.limit).toBe("rate-ceiling");
    expect(speed.words).toMatch(/^SUBMIT_RATE_PER_SEC: the rate sits at its ceiling, 50\/s/);
  });

  it("when invoices remain, none waits in the queue and the fleet sends far below the rate, then the workers are the limit", () => {
    const speed = speedLimit(figures({ waiting: 0, sending: sending({ fleetSentPerSec: 8 }) }));
    expect(speed.limit).toBe("workers");
    expect(speed.words).toMatch(
      /^the workers: few invoices in hand, none waits on the rate \(8\/s sent of 100\/s allowed\)/,
    );
  });

  it("when invoices are taken by a worker and none is sent, then the workers are the limit, a stopped process's jobs named as the likely cause", () => {
    const speed = speedLimit(figures({ waiting: 0, held: 807, sending: sending({ fleetSentPerSec: 0 }) }));
    expect(speed.limit).toBe("workers");
    expect(speed.words).toMatch(
      /^the workers: 807 invoice\(s\) taken by a worker and none sent lately; a process stopped without a word holds its jobs until their locks lapse \(LOCK_DURATION_MS\)/,
    );
  });

  it("when jobs wait in the queue, none is taken and the fleet, which sent before, sent none lately, then no worker runs: the workers are the limit", () => {
    const speed = speedLimit(figures({ held: 0, sending: sending({ fleetSentPerSec: 0 }) }));
    expect(speed.limit).toBe("workers");
    expect(speed.words).toBe(
      "the workers: 500 invoice(s) wait and no worker has taken one lately; see that a worker runs " +
        "(`run`, `start` or `worker`)",
    );
  });

  it("when jobs wait in the queue and nothing bounds the rate yet, then it is still finding the service's speed", () => {
    const speed = speedLimit(figures());
    expect(speed.limit).toBe("learning");
    expect(speed.words).toMatch(/^none yet: the rate is finding the service's speed/);
  });

  it("when nothing is left and nothing sent, then the night is idle with no end to tell", () => {
    const speed = speedLimit(figures({ remaining: 0, waiting: 0, sending: sending({ fleetSentPerSec: 0 }) }));
    expect(speed).toMatchObject({ limit: "idle", endsAt: undefined, endWords: undefined });
  });
});

describe("whether refusals bounded the rate as a capacity does, from the pass's cuts", () => {
  it("when no cut came below the rate the service had accepted in 22 cuts or more, then a capacity; in fewer, it cannot be told", () => {
    expect(refusalsVerdict(22, 0)).toBe("capacity");
    expect(refusalsVerdict(21, 0)).toBe("untold");
    expect(refusalsVerdict(0, 0)).toBe("untold");
  });

  it("when a capacity fell once among many cuts, then still a capacity; a tenth or so below it, nothing yet", () => {
    expect(refusalsVerdict(40, 1)).toBe("capacity");
    expect(refusalsVerdict(18, 2)).toBe("untold");
  });

  it("when more cuts came below it than a tenth would, past chance (refusals at random cut a fifth to a half so in the fleet model), then refusals at every rate", () => {
    expect(refusalsVerdict(46, 11)).toBe("every-rate");
    expect(refusalsVerdict(10, 5)).toBe("every-rate");
    expect(refusalsVerdict(8, 2)).toBe("untold");
    expect(refusalsVerdict(2000, 400)).toBe("every-rate");
  });
});

describe("when the night ends", () => {
  it("when invoices remain and no deadline is known, then the end at the rate accepted lately alone", () => {
    const speed = speedLimit(figures());
    expect(speed.endsAt).toBe(NOW + 60_000);
    expect(speed.endWords).toBe("2400 invoice(s) left: at 40/s accepted they end about 02:01:00 UTC");
  });

  it("when the run's deadline comes before that end, then how late, and that the rest stays queued", () => {
    const speed = speedLimit(figures({ remaining: 40 * 3600, deadline: NOW + 30 * 60_000 }));
    expect(speed.endWords).toMatch(
      /end about 03:00:00 UTC, 30 min after the --deadline at 02:30:00 UTC: what is left then stays queued$/,
    );
  });

  it("when the end comes before the run's deadline, then it says so", () => {
    const speed = speedLimit(figures({ deadline: NOW + 30 * 60_000 }));
    expect(speed.endWords).toMatch(/, before the --deadline at 02:30:00 UTC$/);
  });
});
