/** Process exit codes, exactly as PRODUCT.md defines them for `run` (and used alike by the other commands). */
export const ExitCode = {
  /** Every row succeeded or was a duplicate of an earlier success. */
  Ok: 0,
  /** Could not finish: bad configuration, Redis unreachable, API key refused, deadline passed. */
  CouldNotFinish: 1,
  /** Finished, but some rows were rejected, failed or in conflict. */
  FinishedWithProblems: 2,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
