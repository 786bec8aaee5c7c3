import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { nightSpeedLines, speedSample, type NightReading } from "../../src/cli/night-speed.js";
import type { PassRecord } from "../../src/ledger/passes.js";
import type { SendRateView } from "../../src/queue/send-rate-view.js";
import { speedOf } from "../../src/queue/speed-limit.js";
import { fakeDeploymentView, fakeSendRate } from "../support/deployment-view.js";

const START = Date.parse("2026-12-07T02:00:00Z");

/**
 * The deployment read `s` seconds into the night: `queued` left, the fleet sending as `rate`, `refused`
 * and `accepted` (2xx) in all.
 */
function reading(
  s: number,
  queued: number,
  rate: Partial<SendRateView> | undefined,
  refused = 0,
  passes: readonly PassRecord[] = [],
  accepted = 0,
): NightReading {
  const at = START + s * 1000;
  const view = fakeDeploymentView({
    at,
    queued,
    waiting: queued,
    sendRate: rate === undefined ? undefined : fakeSendRate(rate),
    passes,
  });
  return {
    ...view,
    fleetTotals: {
      ...view.fleetTotals,
      attempts: { ...view.fleetTotals.attempts, "2xx": accepted },
      retries: { ...view.fleetTotals.retries, throttled: refused },
    },
  };
}

const sample = (r: NightReading) => speedSample(r?.census.at ?? START, r);

describe("what run says at its end about the night's speed", () => {
  it("when sending is paused at the end (the key refused) after invoices were accepted, then the night's end is not told from the rate before the pause", () => {
    const sending = { fleetAcceptedPerSec: 100, fleetSentPerSec: 100 };
    const paused = (r: NightReading): NightReading =>
      r === undefined ? r : { ...r, queue: { ...r.queue, isPaused: true } };
    const readings = [
      reading(0, 3000, undefined, 0, [], 0),
      reading(1, 2900, sending, 0, [], 100),
      reading(2, 2800, sending, 0, [], 200),
      paused(reading(3, 2800, sending, 0, [], 200)),
    ];
    const lines = nightSpeedLines(readings.map(sample));
    expect(lines.find((l) => l.startsWith("night ends:"))).toBe(
      "night ends: 2800 invoice(s) left; none accepted lately, so no end can be told",
    );
  });

  it("when the service's refusals bounded the night, then it gives the speed limit in status's words, its share and since when, and the fleet's refusals, nothing more", () => {
    const cutAt = START + 2000;
    const bound = {
      phase: "holding" as const,
      plateauPerSec: 198.4,
      cutAt,
      learnedPerSec: 190,
      fleetAcceptedPerSec: 195,
      cuts: 24,
    };
    const readings = [
      reading(0, 3000, undefined, 4),
      reading(1, 2800, { fleetSentPerSec: 150 }, 4),
      ...[2, 3, 4, 5, 6, 7, 8, 9].map((s) => reading(s, 3000 - 200 * s, bound, 10 + s)),
      reading(10, 0, { ...bound, fleetSentPerSec: 0 }, 34),
    ];
    const lines = nightSpeedLines(readings.map(sample));
    const mid = speedOf(readings[6]);
    expect(lines).toEqual([
      `speed limit: ${mid.words} [82 % of the night's readings, this one since 02:00:02 UTC, its figures as ` +
        "read at 02:00:06 UTC; also learning 18 %]",
      "30 request(s) refused by the service (429, or 503 with Retry-After) while this run ran, every process " +
        "together: each sent again after a wait (the one it asked for, where it gave one), none counted as a " +
        "failed attempt",
    ]);
    expect(mid.words).toMatch(
      /^the service's capacity: about 198.4\/s, learned from its refusals, which rose/,
    );
  });

  it("when refusals at random held the rate low (a service with no limit refusing 10 %), then it names them and their share, since the stretch began, and claims no capacity", () => {
    const random = (s: number) => ({
      phase: "backing-off" as const,
      plateauPerSec: 4,
      cutAt: START + s * 1000 - 400,
      learnedPerSec: 3.6,
      fleetAcceptedPerSec: 3.6,
      cuts: 4 * s,
      cutsUnder: 2 * s,
      answeredSinceCut: 9,
      refusedSinceCut: 1,
    });
    const readings = [
      reading(0, 3000, undefined, 0, [], 0),
      ...[1, 2, 3, 4, 5, 6].map((s) => reading(s, 3000 - 4 * s, random(s), 4 * s, [], 36 * s)),
    ];
    const lines = nightSpeedLines(readings.map(sample));
    expect(lines[0]).toMatch(
      /^speed limit: refusals that came at rates the service had accepted \(8 of 16 cut\(s\) .*; 11 % of answers since refused\): it refuses at random, or its capacity fell; they hold the rate at 3.6\/s, .*this one since 02:00:01 UTC/,
    );
    expect(lines.join("\n")).not.toMatch(/the service's capacity/);
    expect(lines).toContain(
      "24 request(s) refused by the service (429, or 503 with Retry-After), 10 % of those it accepted or refused, " +
        "while this run ran, every process together: each sent again after a wait (the one it asked for, where it " +
        "gave one), none counted as a failed attempt",
    );
  });

  it("when nothing bounded the rate (a service with no limit), then it never says the service's capacity, and says the refusals without calling them capacity", () => {
    const readings = [0, 1, 2, 3].map((s) =>
      reading(s, 3000 - 700 * s, { fleetSentPerSec: 9, fleetAcceptedPerSec: 9, learnedPerSec: 18 }, 5 * s),
    );
    readings.push(reading(4, 0, { fleetSentPerSec: 0, fleetAcceptedPerSec: 0 }, 20));
    const said = nightSpeedLines(readings.map(sample)).join("\n");
    expect(said).toMatch(
      /^speed limit: none yet: the rate is finding the service's speed \(9\/s sent lately\) \[100 %/,
    );
    expect(said).toContain("20 request(s) refused by the service (429, or 503 with Retry-After)");
    expect(said).not.toMatch(/capacity|met the service|requests\/s/);
  });

  it("when the --deadline ends the night with invoices left, then it says when they would end at the rate last accepted, against the deadline", () => {
    const deadline = START + 60_000;
    const run: PassRecord = { id: "p", kind: "run", startedAt: START, deadline } as PassRecord;
    const capped = {
      cappedByConcurrency: true,
      learnedPerSec: 50,
      fleetAcceptedPerSec: 20,
      fleetSentPerSec: 20,
    };
    const readings = [0, 30, 60].map((s) => reading(s, 2400 - 20 * s, capped, 0, [run], 20 * s));
    // the last, as the worker closed at the deadline: nothing accepted lately
    readings.push(
      reading(61, 1200, { ...capped, fleetAcceptedPerSec: 0, fleetSentPerSec: 0 }, 0, [run], 1200),
    );
    const lines = nightSpeedLines(readings.map(sample));
    expect(lines[0]).toMatch(
      /^speed limit: SUBMIT_CONCURRENCY: the requests in flight are capped below what 50\/s needs/,
    );
    expect(lines[0]).toContain("this one since 02:00:00 UTC");
    expect(lines[1]).toBe(
      "night ends: 1200 invoice(s) left: at 20/s accepted they end about 02:02:00 UTC, 1 min after the --deadline at 02:01:00 UTC: what is left then stays queued",
    );
    expect(lines).toHaveLength(2);
  });

  it("when the service refused the key from the first request, then no end is told: nothing was accepted", () => {
    // the pacer counts the refusal as an answer that was no capacity refusal: "accepted" lately at 0.5/s
    const refusedOnce = { learnedPerSec: 5, fleetAcceptedPerSec: 0.5, fleetSentPerSec: 0.5 };
    const readings = [
      reading(0, 4500, undefined),
      reading(1, 4500, refusedOnce),
      reading(2, 4500, { ...refusedOnce, fleetAcceptedPerSec: 0, fleetSentPerSec: 0 }),
    ];
    const lines = nightSpeedLines(readings.map(sample));
    expect(lines).toContain("night ends: 4500 invoice(s) left; none accepted lately, so no end can be told");
    expect(lines.join("\n")).not.toMatch(/end about/);
  });

  it("when Redis stopped answering for most of the night, then Redis is the limit, in status's words", () => {
    const readings: NightReading[] = [reading(0, 100, undefined), undefined, undefined, undefined];
    const samples = readings.map((r, i) => speedSample(START + i * 1000, r));
    expect(nightSpeedLines(samples)[0]).toMatch(
      /^speed limit: Redis: it does not answer.* \[75 % of the night's readings/,
    );
  });

  it("when the night had nothing to send, then there is nothing to say", () => {
    expect(nightSpeedLines([reading(0, 0, undefined), reading(1, 0, undefined)].map(sample))).toEqual([]);
  });

  it("when an operator looks up a slow night, then docs/operations.md starts from the words run's summary prints", async () => {
    const docs = await readFile(new URL("../../docs/operations.md", import.meta.url), "utf8");
    const section = docs.slice(docs.indexOf("### Why is my night slow?"));
    const opening = section.split("\n\n")[1] ?? "";
    const night = [
      reading(0, 10, { cappedByConcurrency: true }, 0),
      reading(1, 10, { cappedByConcurrency: true }, 3),
    ];
    for (const line of nightSpeedLines(night.map(sample))) {
      const words =
        /^(speed limit: |night ends: |\d+ request\(s\) refused by the service)/.exec(line)?.[1] ?? line;
      expect(opening).toContain(words.replace(/^\d+/, "N").replace(/: $/, ": …"));
    }
  });
});
