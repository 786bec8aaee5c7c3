import { RelayError } from "./relay-error.js";

/** Something the code holds for certain did not hold (a bug, or data changed behind its back): the message says what. */
export class InvariantError extends RelayError {
  readonly code = "INVARIANT_BROKEN";
}
