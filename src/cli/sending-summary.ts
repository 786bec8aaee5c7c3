import type { PacerSnapshot } from "../queue/submission-service.js";

/**
 * What the fleet's sending came to during a pass, for the end-of-run summary: the highest rate every
 * process together reached and the requests the service refused for capacity (429) meanwhile.
 */
export class SendingSummary {
  #peak = 0;
  #learned = 0;
  #refusedAtStart: number | undefined;
  #refused = 0;

  observe(snapshot: PacerSnapshot): void {
    this.#peak = Math.max(this.#peak, snapshot.fleetSentPerSec);
    this.#learned = snapshot.rate;
    this.#refusedAtStart ??= snapshot.fleetRefused;
    this.#refused = snapshot.fleetRefused - this.#refusedAtStart;
  }

  /** One line, or undefined when nothing was sent with the fleet's budget. */
  summary(): string | undefined {
    if (this.#refusedAtStart === undefined) return undefined;
    return (
      `sending reached ${Math.round(this.#peak)} requests/s (every process together; learned rate at the end ` +
      `${Math.round(this.#learned)}/s); ${this.#refused} request(s) refused for capacity (429)`
    );
  }
}
