import type { NightlyOutcome } from "../use-cases/nightly-pass.js";
import { ExitCode } from "./exit-codes.js";
import { hasProblems } from "./summary-table.js";

/** The exit code of `run` for what its pass came to (README.md, the exit-code table). */
export function passExitCode(outcome: NightlyOutcome): ExitCode {
  switch (outcome.kind) {
    case "nothing-to-do":
      return ExitCode.Ok;
    case "finished": {
      // A file that changed after its claim is not finished with until it is taken again, whole.
      const current = outcome.batches.filter((m) => m.replaced_by === undefined);
      if (current.some((m) => m.state === "changed")) return ExitCode.CouldNotFinish;
      // Rows of a file still being written were not sent: never "all is well".
      if (outcome.growing.length > 0) return ExitCode.FinishedWithProblems;
      // A replaced batch's rows are all in the batch that replaced it.
      return hasProblems(current) ? ExitCode.FinishedWithProblems : ExitCode.Ok;
    }
    case "api-key-refused":
    case "stopped":
    case "failed":
      return ExitCode.CouldNotFinish;
  }
}
