import { ExitCode } from "./exit-codes.js";
import { leftFileText, type LeftFile } from "../names/file-name.js";
import { escapedText, shownName } from "../names/shown-text.js";
import { passExitCode } from "./pass-exit-code.js";
import { summaryTable } from "./summary-table.js";
import type { NightlyOutcome } from "../use-cases/nightly-pass.js";

// What `run`'s pass came to, in words (stdout: the summary table; stderr: each line to act on), and its
// exit code.

/**
 * A source that could not be polled (unreachable, host key or login refused) makes the run exit 1
 * once everything else is done: its files wait on the server, so the pass did not finish.
 */
export function remoteExitCode(failures: ReadonlyMap<string, Error> | undefined, exitCode: number): number {
  if (failures === undefined || failures.size === 0) return exitCode;
  for (const error of failures.values())
    process.stderr.write(`invoice-relay run: ${escapedText(error.message)}\n`);
  return ExitCode.CouldNotFinish;
}

/** Names each file the pass left where it is; the pass then did not do all there was: never exit 0. */
export function leftExitCode(left: readonly LeftFile[], exitCode: number): number {
  if (left.length === 0) return exitCode;
  for (const file of left) process.stderr.write(`invoice-relay run: ${escapedText(leftFileText(file))}\n`);
  return exitCode === ExitCode.Ok ? ExitCode.FinishedWithProblems : exitCode;
}

/** Prints what the pass came to and returns the exit code. */
export function renderOutcome(outcome: NightlyOutcome, dropDir: string, keySetting: string): number {
  // A line may quote a file name or the service's words: it stays one line, as printed.
  const say = (line: string) => process.stderr.write(`invoice-relay run: ${escapedText(line)}\n`);
  switch (outcome.kind) {
    case "nothing-to-do":
      process.stdout.write(`nothing to do: no ready files in ${dropDir} and no unfinished batches\n`);
      return passExitCode(outcome);
    case "finished": {
      process.stdout.write(`${summaryTable(outcome.batches)}\n`);
      for (const m of outcome.batches.filter((b) => b.state === "changed"))
        say(m.file_error ?? shownName(m.file));
      for (const m of outcome.batches.filter((b) => b.replaced_by !== undefined))
        say(
          `${shownName(m.file)}: batch ${m.id} is replaced by batch ${m.replaced_by ?? ""}, the whole file taken again`,
        );
      for (const m of outcome.batches)
        if (m.same_content_as !== undefined)
          say(
            `${shownName(m.file)}: the same bytes as ${shownName(m.same_content_as.file)} (batch ${m.same_content_as.batch}), ` +
              `taken before from its SFTP source: batch ${m.id}'s rows come out as that file's did`,
          );
      for (const g of outcome.growing.filter((g) => g.source !== undefined))
        say(
          `${shownName(g.file)} on SFTP source ${g.source ?? ""} grew or changed on the server after it was taken, and is ` +
            `still being written (${g.size} bytes now): its other rows are not sent yet. The next pass takes ` +
            `it again, whole, as batch ${g.batch}, once it has settled.`,
        );
      for (const g of outcome.growing.filter((g) => g.source === undefined))
        say(
          `${shownName(g.file)} grew or changed after batch ${g.batch} claimed it (claimed ${g.claimed} bytes, now ${g.size}) ` +
            (g.readiness === "writing"
              ? "and is still being written: its other rows are not sent yet. "
              : g.readiness === "unmarked"
                ? "and waits for its done-marker (DONE_MARKER_SUFFIX): its other rows are not sent yet. "
                : "and the pass stopped before taking it again: its other rows are not sent yet. ") +
            "The next pass takes it again, whole, once it has settled.",
        );
      return passExitCode(outcome);
    }
    case "api-key-refused":
      say(
        `the invoice service refused the API key (HTTP ${outcome.httpStatus}: ${outcome.detail}). ` +
          `Submission is paused and nothing was marked failed; fix ${keySetting} and run again.`,
      );
      return passExitCode(outcome);
    case "stopped":
      say(
        `${outcome.why === "interrupted" ? "interrupted" : "deadline passed"} with ${outcome.pending} invoice(s) not final yet` +
          (outcome.redisDown ? " (Redis unreachable)" : "") +
          (outcome.refusingForCapacity
            ? "; the invoice service is refusing for capacity (429 to every request: a quota spent?)"
            : "") +
          "; they stay queued and the next run continues them.",
      );
      return passExitCode(outcome);
    case "failed":
      say(outcome.error.message);
      return passExitCode(outcome);
  }
}
