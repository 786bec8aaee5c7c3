import { RelayError } from "./relay-error.js";

/** A file-system call of a pass was still under way at the pass's deadline or a signal to stop. */
export class FileSystemUnansweredError extends RelayError {
  readonly code = "FILE_SYSTEM_UNANSWERED";

  constructor(
    readonly what: string,
    endedBy: string,
  ) {
    super(
      `${what} was still under way at ${endedBy}: the file system holding it does not answer (a hung ` +
        "share?), or it needed longer than was left. The file stays where it is and the next run takes it " +
        "up; if it happens again, check the mount",
    );
  }
}
