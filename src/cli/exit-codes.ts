/** Process exit codes, as README.md defines them for `run` and for the other commands ("Exit codes"). */
export const ExitCode = {
  /** Every row succeeded or was a duplicate of an earlier success. */
  Ok: 0,
  /**
   * Could not finish: bad configuration, Redis unreachable, API key refused, deadline passed, a file
   * changed after it was claimed.
   */
  CouldNotFinish: 1,
  /**
   * Finished, but some rows were rejected, failed, in conflict or still pending in a report, or a file
   * was left where it is for its name.
   */
  FinishedWithProblems: 2,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
