import { RelayError } from "./relay-error.js";

/** A file-system call of a pass did not return before the pass's deadline or a signal to stop. */
export class FileSystemUnansweredError extends RelayError {
  readonly code = "FILE_SYSTEM_UNANSWERED";

  constructor(
    readonly what: string,
    endedBy: string,
  ) {
    super(
      `${what} did not answer before ${endedBy}: the file system holding it does not answer (a hung share?); ` +
        "the file stays where it is and the next run takes it up. Check the mount, then run again",
    );
  }
}
