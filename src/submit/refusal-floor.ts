/** The floor taken before the first cut was followed (class comment below). */
const PRIOR_FLOOR = 0.05;
/** How much of the floor one sample after a cut moves. */
const LEARNING = 0.3;

/**
 * Whether a 429 says "over capacity" or is one of the refusals a service gives at any rate (a node that
 * restarts, a limit per connection, a fault): only the first kind may cut the fleet's rate and hold it back.
 *
 * Refusals for capacity stop when the rate goes under the capacity; the others stay a share of answers
 * whatever the rate. A cut takes the rate under the capacity (to 0.8 of what the service accepted), so the
 * refused share of the answers that follow it is the floor: what the service refuses at any rate. Each cut
 * is followed by a sample (at least `sampleMs` and `sampleAnswers` answers to requests sent after the cut),
 * and the floor moves towards it. A 429 speaks of capacity when the refused share of the judged window
 * (the last `windowMs`, and at least `minAnswers` answers back to `maxAgeMs`, so that at a low rate one
 * random 429 is not a share of one) stands above the floor by more than chance explains: three binomial
 * standard deviations plus one answer.
 *
 * Against a service that refuses only for capacity, the floor is 0 after the first cut and the first 429
 * counts. Until a cut was followed, the floor is taken to be PRIOR_FLOOR: a refusal or two at the start
 * cuts nothing, while the overshoot of a first probe (the rate doubling past the capacity) refuses far
 * more. A floor learned from windows of every kind (their median) took in the refusals of a fleet held
 * above a capacity that had dropped, and stopped cutting there.
 */
export class RefusalFloor {
  readonly #recent: { at: number; refused: boolean }[] = [];
  #learned: number | undefined;
  #cutAt = 0;
  #sample: { start: number; answers: number; refused: number } | undefined;

  constructor(
    /** The judged window. */
    private readonly windowMs = 500,
    /** Answers the judged window keeps at least. */
    private readonly minAnswers = 20,
    /** The oldest answer the judged window keeps to hold `minAnswers`. */
    private readonly maxAgeMs = 10_000,
    /** The least length of a sample after a cut. */
    private readonly sampleMs = 1000,
    /** The least answers of a sample after a cut (fewer: one random 429 is a share too large). */
    private readonly sampleAnswers = 50,
  ) {}

  /**
   * The fleet's rate was cut at `cutAt`: only answers to requests sent after it are judged from now on (the
   * refusals that led to the cut, judged again, would cut again and again as long as they stay in the
   * window, and so would the answers to requests already sent or booked at the old rate). The sample that
   * teaches the floor starts afresh with them.
   */
  restart(cutAt: number): void {
    this.#recent.length = 0;
    this.#cutAt = cutAt;
    this.#sample = { start: cutAt, answers: 0, refused: 0 };
  }

  /** Records one answer: accepted (false) or refused with a 429 (true), to a request sent at `sentAt`. */
  observe(refused: boolean, now: number, sentAt = now): void {
    if (sentAt < this.#cutAt) return;
    this.#recent.push({ at: now, refused });
    const old = (at: number) =>
      at < now - this.maxAgeMs || (at < now - this.windowMs && this.#recent.length > this.minAnswers);
    while (old(this.#recent[0]?.at ?? now)) this.#recent.shift();
    const sample = this.#sample;
    if (sample === undefined) return;
    sample.answers++;
    if (refused) sample.refused++;
    if (now - sample.start < this.sampleMs || sample.answers < this.sampleAnswers) return;
    const share = sample.refused / sample.answers;
    this.#learned = this.#learned === undefined ? share : this.#learned + LEARNING * (share - this.#learned);
    this.#sample = undefined;
  }

  /** The share the service refuses whatever the rate, as learned after cuts (PRIOR_FLOOR before). */
  get floor(): number {
    return this.#learned ?? PRIOR_FLOOR;
  }

  /** The refused share of the judged window, and how many answers it is of. */
  recent(): { share: number; answers: number } {
    const answers = this.#recent.length;
    const refused = this.#recent.filter((a) => a.refused).length;
    return { share: answers === 0 ? 0 : refused / answers, answers };
  }

  /** True when the refusals of the judged window stand above the floor: the service is over capacity. */
  overCapacity(): boolean {
    const { share, answers } = this.recent();
    if (answers === 0 || share === 0) return false;
    const floor = this.floor;
    const chance = 3 * Math.sqrt((floor * (1 - floor)) / answers) + 1 / answers;
    return share >= floor + chance;
  }
}
