import { describe, expect, it } from "vitest";
import { RefusalFloor } from "../../src/submit/refusal-floor.js";

const T0 = 1_800_000_000_000;
const none = { accepted: 0, refused: 0, whole: false };

/** A reply whose judged sample is `accepted` and `refused` answers sent over `spanMs` at `rate`. */
function judged(accepted: number, refused: number, rate: number, spanMs = 100) {
  return { judged: { accepted, refused, rateSum: (accepted + refused) * rate, spanMs }, taught: none };
}

/** A reply that closes the sample after a cut: `accepted` and `refused` answers taught the floor. */
function taught(accepted: number, refused: number) {
  return { judged: judged(0, 0, 0).judged, taught: { accepted, refused, whole: true } };
}

describe("the refusal floor", () => {
  it("when answers come back out of order, then the report names the oldest request still unanswered and slices the answers by send time on the server's clock", () => {
    const floor = new RefusalFloor("p1");
    floor.sent(T0);
    floor.sent(T0 + 5);
    floor.sent(T0 + 30);
    floor.answered(false, T0 + 5, 300, 7);
    floor.answered(true, T0 + 30, 300, 7);
    const report = floor.report(T0 + 40, 7);
    expect(report).toMatchObject({ process: "p1", unansweredSince: T0 + 7, judgeFrom: T0 + 40 - 500 + 7 });
    // T0 + 5 + 7 falls in the 20 ms slice starting at T0; T0 + 30 + 7 in the next
    expect(report.slots).toEqual([
      { sentAt: T0, accepted: 1, refused: 0, rateSum: 300 },
      { sentAt: T0 + 20, accepted: 0, refused: 1, rateSum: 300 },
    ]);
    floor.answered(false, T0, 300, 7);
    // none in flight: those it sends from now on are, until its next report
    expect(floor.report(T0 + 50, 7)).toMatchObject({
      unansweredSince: T0 + 50 + 7,
      slots: [expect.anything()],
    });
  });

  it("when the fleet sends slowly, then the judged sample reaches back far enough for twice the least sample, within the budget's ring", () => {
    const floor = new RefusalFloor("p1");
    expect(floor.report(T0, 0, 400).judgeFrom).toBe(T0 - 500);
    expect(floor.report(T0, 0, 25).judgeFrom).toBe(T0 - 800); // 20 answers at 25/s
    expect(floor.report(T0, 0, 5).judgeFrom).toBe(T0 - 1500); // at most
    expect(floor.report(T0, 0).judgeFrom).toBe(T0 - 500); // rate not known
  });

  it("when the budget does not take a report, then its answers go with the next one", () => {
    const floor = new RefusalFloor("p1");
    floor.sent(T0);
    floor.answered(true, T0, 200, 0);
    const lost = floor.report(T0 + 10, 0);
    floor.unreport(lost);
    floor.sent(T0 + 1);
    floor.answered(true, T0 + 1, 200, 0);
    expect(floor.report(T0 + 20, 0).slots).toEqual([{ sentAt: T0, accepted: 0, refused: 2, rateSum: 400 }]);
  });

  it("when nothing is learned yet, then a refusal or two in a large sample is not capacity but a fifth refused is", () => {
    const floor = new RefusalFloor("p1");
    floor.absorb(judged(98, 2, 300));
    expect(floor.overCapacity()).toBe(false);
    floor.absorb(judged(80, 20, 300));
    expect(floor.overCapacity()).toBe(true);
  });

  it("when the sample is small, then it is not judged, unless the fleet sends slowly: a sample of 100 ms at its rate is enough", () => {
    const floor = new RefusalFloor("p1");
    floor.absorb(judged(14, 14, 400)); // 28 answers at 400/s: 30 needed
    expect(floor.overCapacity()).toBe(false);
    floor.absorb(judged(6, 6, 100)); // 12 answers at 100/s: 10 needed
    expect(floor.overCapacity()).toBe(true);
    expect(floor.refusedAboveFloor()).toBe(true);
    floor.absorb(judged(3, 1, 100));
    expect(floor.refusedAboveFloor()).toBe(false); // too few to say anything
  });

  it("when the fleet sent no faster than the capacity last estimated, then a few refusals among a few dozen answers are not judged, a large share or three times the answers are", () => {
    const floor = new RefusalFloor("p1");
    floor.restart(T0, 300);
    floor.absorb(taught(200, 0)); // floor learned: 0
    // 27 accepted, 3 refused over 100 ms: the fleet sent 300/s, the plateau is 300/s
    floor.absorb(judged(27, 3, 300));
    expect(floor.overCapacity(300)).toBe(false);
    expect(floor.overCapacity()).toBe(true); // with no plateau known, as before
    // past the plateau, the same sample is judged
    floor.absorb(judged(27, 3, 350, 80)); // 375/s sent
    expect(floor.overCapacity(300)).toBe(true);
    // a third refused: the capacity dropped, judged at once
    floor.absorb(judged(20, 10, 300));
    expect(floor.overCapacity(300)).toBe(true);
    // a tenth refused over three times the answers
    floor.absorb(judged(81, 9, 300, 300));
    expect(floor.overCapacity(300)).toBe(true);
    // at a low rate no more answers than 300 ms hold: 10 refused 2 at 24/s, under a plateau of 30/s
    floor.absorb(judged(10, 2, 24, 500));
    expect(floor.overCapacity(30)).toBe(true);
  });

  it("when a sample after a cut was all accepted, then the floor is 0 and a tenth refused speaks of capacity, but not a few in a hundred", () => {
    const floor = new RefusalFloor("p1");
    floor.restart(T0, 300);
    floor.absorb(taught(120, 0));
    expect(floor.floor).toBe(0);
    floor.absorb(judged(96, 4, 300));
    expect(floor.overCapacity()).toBe(false); // a floor learned from 120 answers may still miss a few in a hundred
    floor.absorb(judged(90, 10, 300));
    expect(floor.overCapacity()).toBe(true);
  });

  it("when the service refuses 5 % at any rate, then the floor learns it, and that share is not capacity while a tenth more is", () => {
    const floor = new RefusalFloor("p1");
    for (const refused of [6, 5, 4, 7, 5]) {
      floor.restart(T0, 300);
      floor.absorb(taught(100 - refused, refused));
    }
    expect(floor.floor).toBeCloseTo(0.05);
    floor.absorb(judged(285, 15, 300, 1000));
    expect(floor.overCapacity()).toBe(false);
    floor.absorb(judged(255, 45, 300, 1000));
    expect(floor.overCapacity()).toBe(true);
  });

  it("when one sample after a cut counted capacity refusals too (the cut estimated too high), then the floor does not take it", () => {
    const floor = new RefusalFloor("p1");
    for (const refused of [0, 30, 1]) {
      floor.restart(T0, 300);
      floor.absorb(taught(100 - refused, refused));
    }
    expect(floor.floor).toBeCloseTo(0.01);
    floor.restart(T0, 300);
    floor.absorb(taught(90, 0)); // 0, 0.01, 0.3, 0: the second least
    expect(floor.floor).toBe(0);
  });

  it("when samples after cuts are small (a slow fleet), then they add up until they are enough to teach", () => {
    const floor = new RefusalFloor("p1");
    floor.restart(T0, 20);
    floor.absorb(taught(10, 0));
    expect(floor.floor).toBe(0.05); // the prior: 10 answers say little
    floor.restart(T0 + 2000, 20);
    floor.absorb(taught(25, 0));
    expect(floor.floor).toBe(0);
  });

  it("when the service let through 300 requests/s of what it was sent, then that is the capacity, with what it refuses at any rate counted back in", () => {
    const floor = new RefusalFloor("p1");
    floor.absorb(judged(30, 30, 600, 100));
    expect(floor.capacity()).toBeCloseTo(300);
    for (let i = 0; i < 3; i++) {
      floor.restart(T0, 300);
      floor.absorb(taught(90, 10));
    }
    floor.absorb(judged(27, 30, 600, 100));
    expect(floor.capacity()).toBeCloseTo(300);
    expect(new RefusalFloor("p2").capacity()).toBeUndefined();
  });

  it("when a short span holds more accepted answers than the rate they were sent at could give, then the capacity is the accepted share of that rate", () => {
    const floor = new RefusalFloor("p1");
    // 40 accepted in 60 ms reads as 667/s, but they were sent at 500/s and a fifth was refused
    floor.absorb(judged(40, 10, 500, 60));
    expect(floor.capacity()).toBeCloseTo(400);
  });

  it("when the rate was cut, then the judged sample starts afresh and the answers after it teach the floor within the new plateau", () => {
    const floor = new RefusalFloor("p1");
    floor.absorb(judged(50, 50, 600));
    expect(floor.overCapacity()).toBe(true);
    floor.restart(T0 + 1000, 300);
    expect(floor.overCapacity()).toBe(false);
    expect(floor.report(T0 + 1100, 0)).toMatchObject({
      judgeFrom: T0 + 1000,
      teachFrom: T0 + 1000,
      teachTo: T0 + 1500,
      teachWithin: 285,
    });
  });
});
