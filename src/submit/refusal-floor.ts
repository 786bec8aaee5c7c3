/** The floor taken before enough windows were seen (class comment below). */
const PRIOR_FLOOR = 0.05;

/**
 * Whether a 429 says "over capacity" or is one of the refusals a service gives at any rate (a node that
 * restarts, a limit per connection, a fault): only the first kind may cut the fleet's rate and hold it back.
 *
 * Refusals for capacity grow with the rate sent past the capacity; the others are a share of answers
 * whatever the rate. So the floor is that share as seen in calm moments: the median of the refused share
 * over recent windows of answers (the rate spends most of its time at or under the capacity, where only
 * the floor is refused; a lower quantile judged one random 429 in eleven as capacity at a 5 % floor). A 429 speaks of capacity when the refused share of the last `windowMs` stands
 * above the floor by more than chance explains (three standard deviations of a binomial share) plus one
 * answer. With no refusals seen in calm windows the floor is 0 and the first 429 counts, as it should
 * against a service that refuses only for capacity. Until enough windows were seen, the floor is taken to
 * be `PRIOR_FLOOR`: a refusal or two at the start then cuts nothing, while the overshoot of a first probe
 * (the rate doubling past the capacity) refuses far more than that. The judged window holds at least
 * `minAnswers` answers (back to `maxAgeMs`), so that at a low rate one random 429 is not a share of one.
 */

export class RefusalFloor {
  readonly #recent: { at: number; refused: boolean }[] = [];
  readonly #shares: number[] = [];
  #window = { start: 0, answers: 0, refused: 0 };
  #quietUntil = 0;

  constructor(
    now: number,
    /** The sliding window a 429 is judged in, and the least length of a window the floor learns from. */
    private readonly windowMs = 500,
    /** Answers a window needs before its share says anything about the floor. */
    private readonly minAnswers = 20,
    /** Windows remembered for the floor. */
    private readonly windows = 20,
    /** Windows needed before the floor is believed (PRIOR_FLOOR before). */
    private readonly minWindows = 4,
    /** The oldest answer the judged window keeps to hold `minAnswers`. */
    private readonly maxAgeMs = 10_000,
  ) {
    this.#window.start = now;
  }

  /**
   * The fleet's rate was cut: answers until `until` are to requests sent before the cut, and the judged
   * window starts afresh after them (its refusals led to the cut; judged again, they would cut again and
   * again as long as they stay in it).
   */
  restart(until: number): void {
    this.#recent.length = 0;
    this.#quietUntil = until;
  }

  /** Records one answer: accepted (false) or refused with a 429 (true). */
  observe(refused: boolean, now: number): void {
    if (now >= this.#quietUntil) this.#recent.push({ at: now, refused });
    const old = (at: number) =>
      at < now - this.maxAgeMs || (at < now - this.windowMs && this.#recent.length > this.minAnswers);
    while (old(this.#recent[0]?.at ?? now)) this.#recent.shift();
    const w = this.#window;
    w.answers++;
    if (refused) w.refused++;
    if (now - w.start >= this.windowMs && w.answers >= this.minAnswers) {
      this.#shares.push(w.refused / w.answers);
      if (this.#shares.length > this.windows) this.#shares.shift();
      this.#window = { start: now, answers: 0, refused: 0 };
    }
  }

  /** The share refused whatever the rate: the median of the recent windows' shares. */
  get floor(): number {
    if (this.#shares.length < this.minWindows) return PRIOR_FLOOR;
    const sorted = [...this.#shares].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
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
