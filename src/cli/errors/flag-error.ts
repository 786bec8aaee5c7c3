import { RelayError } from "../../errors/relay-error.js";

/** A command-line flag has a value the command cannot use; the message names the flag and a usable value. */
export class FlagError extends RelayError {
  readonly code = "CLI_FLAG_INVALID";
}
