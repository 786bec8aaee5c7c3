import type { AttemptObservation, PacerSnapshot } from "../queue/submission-service.js";

/**
 * What `run` says at its end about how the service took its sending, in an operator's words: the
 * requests it refused for capacity ("not now"), counted as this process received them (the fleet's count
 * in Redis holds every process's); when the fleet met the service's
 * capacity, how many requests a second the service took (the fleet's accepted rate, the median once
 * the capacity was met: never the learned rate, which may stand above what the service took); and when
 * SUBMIT_CONCURRENCY held the sending below what the rate needed.
 */
export class SendingSummary {
  #throttled = 0;
  #last: PacerSnapshot | undefined;
  #metCapacity = false;
  #capped = false;
  readonly #acceptedPerSec: number[] = [];

  observe(snapshot: PacerSnapshot): void {
    this.#last = snapshot;
    if (snapshot.phase !== "probing") this.#metCapacity = true;
    if (snapshot.capped) this.#capped = true;
    if (this.#metCapacity && snapshot.fleetAcceptedPerSec > 0)
      this.#acceptedPerSec.push(snapshot.fleetAcceptedPerSec);
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
        `${this.#throttled} of this run's requests were refused for capacity (429, or 503 with Retry-After: ` +
          `the service's "not now") and sent again after the wait it asked for, none counted as a failed attempt`,
      );
    const last = this.#last;
    if (last !== undefined && last.refusingSince > 0)
      said.push("at the end the service was refusing every request for capacity");
    else if (last !== undefined && this.#metCapacity) {
      const accepted = median(this.#acceptedPerSec);
      said.push(
        accepted === undefined
          ? "the fleet met the service's capacity"
          : `the fleet met the service's capacity; the service took about ${Math.round(accepted)} ` +
              "requests/s (every process together, answered without a refusal)",
      );
    }
    if (this.#capped)
      said.push(
        "SUBMIT_CONCURRENCY held the requests in flight below what the learned rate needed at the " +
          "service's latency; raise it to send faster",
      );
    return said.length === 0 ? undefined : said.join("; ");
  }
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
