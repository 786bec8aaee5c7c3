import { RECOVER_MS } from "../capacity/index.js";

/**
 * The longest an invoice was in hand lately apart from its wait for a send time (its Redis work and its
 * request): over this window of K (RECOVER_MS) and the one before, as the pacer keeps the slowest answer.
 * Before any invoice was handled, K itself: the time in which the learned rate moves.
 */
export class TimeInHand {
  #longest = [0, 0];
  #windowAt = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  /** An invoice was in hand `ms` apart from its wait for a send time. */
  handled(ms: number): void {
    this.#roll();
    this.#longest[0] = Math.max(this.#longest[0] ?? 0, ms);
  }

  get ms(): number {
    this.#roll();
    const longest = Math.max(...this.#longest);
    return longest > 0 ? longest : RECOVER_MS;
  }

  #roll(): void {
    const now = this.clock();
    if (now - this.#windowAt < RECOVER_MS) return;
    this.#longest = [0, now - this.#windowAt < 2 * RECOVER_MS ? (this.#longest[0] ?? 0) : 0];
    this.#windowAt = now;
  }
}
