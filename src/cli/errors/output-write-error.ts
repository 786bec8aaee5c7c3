import { RelayError } from "../../errors/relay-error.js";

/** The command's output (stdout or a file) could not be written: the message gives the reason. */
export class OutputWriteError extends RelayError {
  readonly code = "OUTPUT_WRITE_FAILED";
}
