import type { AttemptObservation, PacerSnapshot } from "../queue/submission-service.js";

/**
 * What `run` says at its end about how the service took its sending, in an operator's words: the
 * requests it answered 429 ("not now"), counted as this process received them (the fleet's count in Redis
 * is written a little later and would miss the last ones), and, when the fleet met the service's
 * capacity, the rate it held. Nothing when there is nothing to say: a pass the service never slowed.
 */
export class SendingSummary {
  #throttled = 0;
  #last: PacerSnapshot | undefined;
  #metCapacity = false;

  observe(snapshot: PacerSnapshot): void {
    this.#last = snapshot;
    if (snapshot.phase !== "probing") this.#metCapacity = true;
  }

  /** Every answer this process received (SubmissionHooks.onAttempt). */
  attempted(attempt: AttemptObservation): void {
    if (attempt.retryReason === "throttled") this.#throttled++;
  }

  /** One line, or undefined when the service never slowed the pass. */
  summary(): string | undefined {
    const said: string[] = [];
    if (this.#throttled > 0)
      said.push(
        `${this.#throttled} of this run's requests were answered 429 (the service's "not now") and sent ` +
          "again after the wait it asked for, none counted as a failed attempt",
      );
    const last = this.#last;
    if (last !== undefined && last.refusingSince > 0)
      said.push("at the end the service was refusing every request for capacity (429)");
    else if (last !== undefined && this.#metCapacity)
      said.push(
        `the fleet met the service's capacity and held its sending at about ${Math.round(last.rate)} ` +
          "requests/s (every process together)",
      );
    return said.length === 0 ? undefined : said.join("; ");
  }
}
