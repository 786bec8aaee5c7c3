import { RelayError } from "../../errors/relay-error.js";

/** A filter flag of `results` that cannot be read: the message names the flag and what it takes. */
export class ResultsFilterError extends RelayError {
  readonly code = "RESULTS_FILTER_INVALID";

  constructor(
    readonly flag: string,
    problem: string,
  ) {
    super(`${flag}: ${problem}`);
  }
}
