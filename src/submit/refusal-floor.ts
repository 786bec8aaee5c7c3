import {
  SEND_BUDGET_SCRIPT,
  type AnswerReport,
  type AnswerSlot,
  type BudgetReply,
} from "../ledger/send-budget.js";

/** The floor before any sample after a cut: 1 refusal in 20. */
const PRIOR_FLOOR = 0.05;
/**
 * Refusals judged over capacity are at least this share above the floor: a floor learned from a few
 * samples may be 0, or half the truth, for a service that refuses one in twenty at random, and cuts on
 * such refusals would estimate the capacity from a fleet under it, each a little lower (a margin of 3 %
 * let the fleet model's night with 5 % random refusals fall to a quarter of the capacity). Smaller
 * excesses take the rate back to the plateau instead (src/submit/send-pacer.ts), which lowers nothing.
 */
const EXCESS = 0.08;
/** Samples after cuts the floor is made of. */
const SAMPLES_KEPT = 5;
/** From this many samples on the floor is their second least (see `floor`). */
const LEARNED_SAMPLES = 3;
/** Only answers to requests sent this far under the plateau teach the floor: a plateau a little too high
 * would otherwise teach it the capacity's own refusals. */
const TEACH_WITHIN = 0.95;
/** See `overCapacity`: a sample sent no faster than the plateau is judged on this many times the answers... */
const UNDER_PLATEAU_ANSWERS = 3;
/** ... unless this share of it or more was refused; and at most the answers of this long at its rate. */
const UNDER_PLATEAU_SHARE = 0.25;
const UNDER_PLATEAU_MS = 300;
/** The fewest answers a judged sample is ever judged on. */
const LEAST_SAMPLE = 10;
/** The judged sample reaches back this far at most (the budget keeps 2 s of answers). */
const MOST_WINDOW_MS = 1500;
/** Answers are reported to the fleet by send time in slices this long: the script's slots. */
const SLICE_MS = SEND_BUDGET_SCRIPT.SLOT_MS;

export interface RefusalFloorOptions {
  /** The judged sample reaches back this far at most. */
  readonly windowMs: number;
  /** Answers a judged sample needs, the whole fleet's. */
  readonly minAnswers: number;
  /** How long after a cut the rate stays under the capacity: its answers teach the floor. */
  readonly learnMs: number;
  /** Answers a sample after a cut needs to teach the floor. */
  readonly sampleAnswers: number;
}

export const DEFAULT_REFUSAL_FLOOR: RefusalFloorOptions = {
  windowMs: 500,
  minAnswers: 30,
  learnMs: 500,
  sampleAnswers: 30,
};

/**
 * Whether 429s say "over capacity" or are refusals a service gives at any rate (a node that restarts, a
 * limit per connection, a fault), and, when it is capacity, what share of the fleet's requests the service
 * accepted, from which the pacer estimates the capacity. Every process reports the answers it hears to the
 * fleet's budget by the time their requests were sent (send-budget.lua), so each judges on the whole
 * fleet's answers: three processes judge three times sooner, on three times as many answers, as one alone.
 *
 * The judged sample is the fleet's answers to requests sent after the first refused one of the last
 * `windowMs` (and since the last cut), up to the oldest request any process still waits for: before that
 * refusal the service's bucket still had room and says nothing of its rate, and a sample with requests
 * still unanswered would count the refusals (answered at once) before the acceptances (answered after the
 * work). Once it holds `minAnswers` answers, its refused share speaks of capacity when it stands above the
 * floor by more than chance explains: three binomial standard deviations plus one answer. The same sample
 * says what the service lets through: from the first refusal on its bucket is empty, so the requests it
 * accepted per second of the time they were sent in is its rate, however fast the fleet's rate moved.
 *
 * Refusals for capacity stop when the rate goes under the capacity; the others stay a share of answers
 * whatever the rate. A cut takes the rate under the capacity for a while (src/submit/send-rate.ts), so the
 * refused share of the answers to requests sent in that while, at a rate within the new plateau, is what
 * the service refuses at any rate: the floor (see `floor` for how the samples make it).
 */
export class RefusalFloor {
  readonly #options: RefusalFloorOptions;
  /** Requests sent and not answered yet: how many per send time, and their send times in order. */
  readonly #inFlight = new Map<number, number>();
  readonly #sendOrder: number[] = [];
  /** Answers heard and not reported yet, by slice of send time (the server's clock). */
  readonly #pending = new Map<number, { accepted: number; refused: number; rateSum: number }>();
  #cutAt = Number.NEGATIVE_INFINITY;
  #teach: { from: number; to: number; within: number } | undefined;
  readonly #samples: number[] = [];
  /** Answers that taught the floor and are not a sample yet. */
  #taught = { accepted: 0, refused: 0 };
  #judged = { accepted: 0, refused: 0, rateSum: 0, spanMs: 0 };

  constructor(
    /** This process's name among the fleet's. */
    private readonly process: string,
    options: Partial<RefusalFloorOptions> = {},
  ) {
    this.#options = { ...DEFAULT_REFUSAL_FLOOR, ...options };
  }

  /** A request went out at `sentAt`; its answer (answered) or its lack of one (settled) follows. */
  sent(sentAt: number): void {
    this.#inFlight.set(sentAt, (this.#inFlight.get(sentAt) ?? 0) + 1);
    const order = this.#sendOrder;
    if (order.length === 0 || (order.at(-1) ?? 0) < sentAt) order.push(sentAt);
    else if (!order.includes(sentAt)) {
      let at = order.length;
      while (at > 0 && (order[at - 1] ?? 0) > sentAt) at--;
      order.splice(at, 0, sentAt);
    }
  }

  /** The request sent at `sentAt` is no longer in flight (gone without a word on capacity). */
  settled(sentAt: number): void {
    const left = (this.#inFlight.get(sentAt) ?? 0) - 1;
    if (left > 0) this.#inFlight.set(sentAt, left);
    else this.#inFlight.delete(sentAt);
    const order = this.#sendOrder;
    while (order.length > 0 && !this.#inFlight.has(order[0] ?? 0)) order.shift();
  }

  /**
   * One answer: accepted (false) or refused with a 429 (true), to a request sent at `sentAt` while the
   * fleet's rate was `rate` requests per second; reported to the fleet with the next call to the budget.
   * `offset` turns this process's clock into the server's.
   */
  answered(refused: boolean, sentAt: number, rate: number, offset = 0): void {
    this.settled(sentAt);
    // sliced on the server's clock, as the fleet's answers are: sliced on this process's and moved by
    // the offset after, an answer could land in the slice before its request's, among whole slices
    const slice = Math.floor((sentAt + offset) / SLICE_MS) * SLICE_MS;
    const slot = this.#pending.get(slice) ?? { accepted: 0, refused: 0, rateSum: 0 };
    if (refused) slot.refused++;
    else slot.accepted++;
    slot.rateSum += rate;
    this.#pending.set(slice, slot);
  }

  /**
   * The fleet's rate was cut at `cutAt` (this process's clock) to under `plateau`: only answers to
   * requests sent after it are judged from now on (the refusals that led to the cut, judged again, would
   * cut again), and those sent within `learnMs` of it at a rate within the plateau teach the floor.
   */
  restart(cutAt: number, plateau: number): void {
    this.#cutAt = cutAt;
    this.#judged = { accepted: 0, refused: 0, rateSum: 0, spanMs: 0 };
    this.#teach = { from: cutAt, to: cutAt + this.#options.learnMs, within: TEACH_WITHIN * plateau };
  }

  /**
   * How far back the judged sample reaches at the fleet's `rate`: `windowMs`, or at a low rate long enough
   * for twice the least sample (at most MOST_WINDOW_MS, within the budget's ring). Half a second holds 6
   * answers at 13/s: a fleet sending 18/s past a capacity of 13/s was never judged, and refused a third
   * of its requests for seconds.
   */
  #windowMs(rate: number): number {
    const wanted = rate > 0 ? (2 * LEAST_SAMPLE * 1000) / rate : 0;
    return Math.min(MOST_WINDOW_MS, Math.max(this.#options.windowMs, wanted));
  }

  /**
   * What to tell the budget with the next call: the answers heard since the last report (taken: give
   * them back with `unreport` when the call fails), this process's oldest request unanswered, and what to
   * judge. `offset` turns this process's clock into the server's; `now` is this process's clock; `rate`
   * the fleet's rate (0: not known), which sets how far back the judged sample reaches.
   */
  report(now: number, offset: number, rate = 0): AnswerReport {
    const slots: AnswerSlot[] = [...this.#pending].map(([slice, s]) => ({ sentAt: slice, ...s }));
    this.#pending.clear();
    const oldest = this.#sendOrder[0];
    const teach = this.#teach;
    return {
      process: this.process,
      // none in flight: any sent from now on is, until the next report (a process that said "none" and
      // then sent would let the fleet judge slots its answers are missing from, a capacity read low)
      unansweredSince: (oldest ?? now) + offset,
      judgeFrom: Math.max(this.#cutAt, now - this.#windowMs(rate)) + offset,
      teachFrom: teach === undefined ? 0 : teach.from + offset,
      teachTo: teach === undefined ? 0 : teach.to + offset,
      teachWithin: teach?.within ?? 0,
      slots,
    };
  }

  /** A report the budget did not take: its answers go with the next one. */
  unreport(report: AnswerReport): void {
    for (const s of report.slots) {
      const slice = s.sentAt;
      const slot = this.#pending.get(slice) ?? { accepted: 0, refused: 0, rateSum: 0 };
      slot.accepted += s.accepted;
      slot.refused += s.refused;
      slot.rateSum += s.rateSum;
      this.#pending.set(slice, slot);
    }
  }

  /** The fleet's answers as the budget's reply gives them: the judged sample, and the one that teaches. */
  absorb(reply: Pick<BudgetReply, "judged" | "taught">): void {
    this.#judged = reply.judged;
    const teach = this.#teach;
    if (teach === undefined || !reply.taught.whole) return;
    this.#teach = undefined;
    // At a low rate one while after a cut holds few answers: they add up over cuts until they are enough.
    const taught = this.#taught;
    taught.accepted += reply.taught.accepted;
    taught.refused += reply.taught.refused;
    const answers = taught.accepted + taught.refused;
    if (answers < this.#options.sampleAnswers) return;
    this.#samples.push(taught.refused / answers);
    this.#taught = { accepted: 0, refused: 0 };
    if (this.#samples.length > SAMPLES_KEPT) this.#samples.shift();
  }

  /**
   * The share the service refuses whatever the rate, as learned after cuts (1 in 20 before any). A cut that
   * estimated the capacity too high leaves the rate above it, and its sample counts capacity refusals too;
   * refusals at any rate are in every sample. So the floor is the least of the samples while there are
   * fewer than three (and of the prior), then the second least: one low by chance does not make it.
   */
  get floor(): number {
    const sorted = [...this.#samples].sort((a, b) => a - b);
    if (sorted.length < LEARNED_SAMPLES) return Math.min(PRIOR_FLOOR, ...sorted);
    return sorted[1] ?? PRIOR_FLOOR;
  }

  /**
   * The judged sample: its answers, their refused share, the fleet's mean rate when they were sent, and
   * the requests per second the service accepted of them (the accepted answers over the time they were
   * sent in: with the service's bucket empty from the first refusal on, what it lets through is its rate).
   */
  judged(): { share: number; answers: number; rate: number; acceptedPerSec: number; sentPerSec: number } {
    const { accepted, refused, rateSum, spanMs } = this.#judged;
    const answers = accepted + refused;
    if (answers === 0) return { share: 0, answers: 0, rate: 0, acceptedPerSec: 0, sentPerSec: 0 };
    return {
      share: refused / answers,
      answers,
      rate: rateSum / answers,
      acceptedPerSec: spanMs > 0 ? (accepted * 1000) / spanMs : 0,
      sentPerSec: spanMs > 0 ? (answers * 1000) / spanMs : 0,
    };
  }

  /**
   * True when the judged sample is large enough to estimate the capacity from and its refusals stand
   * above the floor. Large enough: `minAnswers`, or the answers of 100 ms at the rate they were sent at
   * when that is fewer (at least 10): a slow fleet would otherwise wait seconds for its sample.
   *
   * A sample the fleet sent no faster than `plateau` in (the capacity last estimated; just after a cut it
   * sends at beta of it) needs UNDER_PLATEAU_ANSWERS times as many answers (at most UNDER_PLATEAU_MS of
   * them), unless its refused share is
   * UNDER_PLATEAU_SHARE or more: a few refusals among a few dozen answers are then the fleet's own
   * unevenness against a bucket the cut left empty, and a cut on them read the fleet's rate as the
   * capacity, a tenth low. A capacity that dropped shows as a large share at once; one a little lower,
   * over the larger sample.
   */
  overCapacity(plateau = 0): boolean {
    const { answers, rate, share, sentPerSec } = this.judged();
    const enough = Math.max(LEAST_SAMPLE, Math.min(this.#options.minAnswers, Math.round(0.1 * rate)));
    const under = plateau > 0 && sentPerSec <= plateau && share < UNDER_PLATEAU_SHARE;
    // ... at most what UNDER_PLATEAU_MS of answers hold: the judged sample reaches back `windowMs` only,
    // and at a low rate a larger one would never come (a fleet past a capacity of 13/s was never cut)
    const larger = Math.min(
      UNDER_PLATEAU_ANSWERS * enough,
      Math.max(enough, Math.round((UNDER_PLATEAU_MS * sentPerSec) / 1000)),
    );
    return answers >= (under ? larger : enough) && this.#aboveFloor();
  }

  /** True once the floor is made of enough samples that one low by chance does not make it. */
  get learned(): boolean {
    return this.#samples.length >= LEARNED_SAMPLES;
  }

  /** The least share above the floor that refusals must stand at to speak of capacity. */
  get excess(): number {
    return EXCESS;
  }

  /** True when the refusals so far stand above the floor, however few answers came back yet. */
  refusedAboveFloor(): boolean {
    return this.judged().answers >= 5 && this.#aboveFloor();
  }

  #aboveFloor(): boolean {
    const { share, answers } = this.judged();
    if (share === 0) return false;
    const floor = this.floor;
    // Judged again with every reply, on windows that overlap: a margin of half the floor besides chance,
    // or a service refusing one request in twenty at random would be judged over capacity every second.
    const chance = 3 * Math.sqrt((floor * (1 - floor)) / answers) + 1 / answers;
    return share >= Math.max(1.5 * floor + chance, floor + this.excess);
  }

  /**
   * The service's capacity as the judged sample shows it: the requests per second it accepted, with the
   * refusals it gives at any rate counted back in once learned (the prior only guards the judgment).
   * Undefined without a sample.
   */
  capacity(): number | undefined {
    const { answers, acceptedPerSec, rate, share } = this.judged();
    if (answers === 0 || acceptedPerSec <= 0) return undefined;
    const floor = this.#samples.length === 0 ? 0 : Math.min(0.9, this.floor);
    // Over a short span the accepted answers per second overstate it (requests stamped in one slot
    // reach the service a few milliseconds apart, and a bucket's burst lands in the first slots): never
    // more than the accepted share of the rate they were sent at.
    const accepted = rate > 0 ? Math.min(acceptedPerSec, rate * (1 - share)) : acceptedPerSec;
    return accepted / (1 - floor);
  }
}
