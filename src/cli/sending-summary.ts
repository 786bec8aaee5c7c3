import type { AttemptObservation, PacerSnapshot } from "../queue/submission-service.js";

/**
 * What `run` says at its end about how the service took its sending, in an operator's words: the
 * requests it answered 429 ("not now"), counted as this process received them (the fleet's count in Redis
 * is written a little later and would miss the last ones), and, when the fleet met the service's
 * capacity, how many requests a second the service accepted. That figure is what the fleet sent (never
 * more than its learned rate) times the share of this run's answers that were acceptances over the same
 * moments, the median over the pass once the capacity was met: never the learned rate alone, which may
 * stand above what the service took.
 */
export class SendingSummary {
  #throttled = 0;
  #last: PacerSnapshot | undefined;
  #metCapacity = false;
  #answered = 0;
  #accepted = 0;
  readonly #acceptedPerSec: number[] = [];

  observe(snapshot: PacerSnapshot): void {
    this.#last = snapshot;
    if (snapshot.phase !== "probing") this.#metCapacity = true;
    if (this.#metCapacity && this.#answered > 0 && snapshot.fleetSentPerSec > 0) {
      const sent = Math.min(snapshot.rate, snapshot.fleetSentPerSec);
      this.#acceptedPerSec.push((sent * this.#accepted) / this.#answered);
    }
    this.#answered = 0;
    this.#accepted = 0;
  }

  /** Every answer this process received (SubmissionHooks.onAttempt). */
  attempted(attempt: AttemptObservation): void {
    if (attempt.retryReason === "throttled") this.#throttled++;
    this.#answered++;
    if (attempt.statusClass === "2xx") this.#accepted++;
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
    else if (last !== undefined && this.#metCapacity) {
      const accepted = median(this.#acceptedPerSec);
      said.push(
        accepted === undefined
          ? "the fleet met the service's capacity"
          : `the fleet met the service's capacity; the service accepted about ${Math.round(accepted)} ` +
              "requests/s (every process together)",
      );
    }
    return said.length === 0 ? undefined : said.join("; ");
  }
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
