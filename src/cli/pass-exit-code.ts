import type { NightlyOutcome } from "../use-cases/nightly-pass.js";
import { ExitCode } from "./exit-codes.js";
import { hasProblems } from "./summary-table.js";

/** The exit code of `run` for what its pass came to (README.md, the exit-code table). */
export function passExitCode(outcome: NightlyOutcome): ExitCode {
  switch (outcome.kind) {
    case "nothing-to-do":
      return ExitCode.Ok;
    case "finished":
      // A file that changed after its claim is not finished with, whatever its rows say.
      if (outcome.batches.some((m) => m.state === "changed")) return ExitCode.CouldNotFinish;
      return hasProblems(outcome.batches) ? ExitCode.FinishedWithProblems : ExitCode.Ok;
    case "api-key-refused":
    case "stopped":
    case "failed":
      return ExitCode.CouldNotFinish;
  }
}
