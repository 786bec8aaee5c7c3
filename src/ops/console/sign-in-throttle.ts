/** How many wrong tokens are tolerated within a window, from one address and from all together. */
export interface ThrottleLimits {
  readonly perClient: number;
  readonly global: number;
  readonly windowMs: number;
}

/**
 * 5 wrong tokens a minute from one address, 20 from all: a person who mistypes waits a minute at worst,
 * while a guesser gets at most 28,800 guesses a day however many addresses it has.
 */
export const SIGN_IN_LIMITS: ThrottleLimits = { perClient: 5, global: 20, windowMs: 60_000 };

/**
 * Wrong console tokens (sign-ins and bearer tokens) per client address, over a sliding window, kept in
 * this process's memory: a restart forgets them, and each process of a deployment counts its own. While
 * an address must wait, its tokens are not compared at all, so waiting reveals nothing. Pure but for the
 * clock it is given.
 */
export class SignInThrottle {
  readonly #limits: ThrottleLimits;
  readonly #now: () => number;
  /** Times of each address's wrong tokens in the window, oldest first. */
  readonly #byClient = new Map<string, number[]>();
  /** Times of every wrong token in the window, oldest first. */
  #all: number[] = [];

  constructor(limits: ThrottleLimits = SIGN_IN_LIMITS, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Milliseconds `client` must wait before a token of its is compared again; 0: now. */
  waitMs(client: string): number {
    const now = this.#now();
    this.#forget(now);
    const { perClient, global, windowMs } = this.#limits;
    return Math.max(
      waitOf(this.#byClient.get(client) ?? [], perClient, windowMs, now),
      waitOf(this.#all, global, windowMs, now),
    );
  }

  /** Notes a wrong token from `client`; how many it and all clients have sent in the window, this one included. */
  failed(client: string): { readonly client: number; readonly all: number } {
    const now = this.#now();
    this.#forget(now);
    const times = this.#byClient.get(client) ?? [];
    times.push(now);
    this.#byClient.set(client, times.slice(-this.#limits.perClient));
    this.#all.push(now);
    this.#all = this.#all.slice(-this.#limits.global);
    return { client: times.length, all: this.#all.length };
  }

  /** A right token from `client`: its own count starts again (the count of all does not). */
  succeeded(client: string): void {
    this.#byClient.delete(client);
  }

  /** Addresses with wrong tokens in the window: at most `global`, since nothing past the ceiling is noted. */
  get clients(): number {
    this.#forget(this.#now());
    return this.#byClient.size;
  }

  #forget(now: number): void {
    const since = now - this.#limits.windowMs;
    this.#all = this.#all.filter((t) => t > since);
    for (const [client, times] of this.#byClient) {
      const kept = times.filter((t) => t > since);
      if (kept.length === 0) this.#byClient.delete(client);
      else this.#byClient.set(client, kept);
    }
  }
}

/** With `limit` failures in the window, the wait until the oldest of the last `limit` leaves it. */
function waitOf(times: readonly number[], limit: number, windowMs: number, now: number): number {
  if (times.length < limit) return 0;
  const oldest = times[times.length - limit] ?? now;
  return Math.max(0, oldest + windowMs - now);
}
