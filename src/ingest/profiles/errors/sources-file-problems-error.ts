import { RelayError } from "../../../errors/relay-error.js";

/** One thing wrong in the sources file, already worded with where it is and what to write. */
export interface ProfileProblem {
  /** `sources.yaml, profile 2 ("sap-*.csv")`, or the file alone for the file's top level. */
  readonly where: string;
  /** The field as written in the file, e.g. `encoding` or `columns["Währung"]`; absent for a whole profile. */
  readonly field?: string | undefined;
  readonly line?: number | undefined;
  /** What is wrong and what to write instead. */
  readonly problem: string;
}

/**
 * Base of the errors that list every problem found in the sources file at once, each naming the file,
 * where in it and the field, so one edit can fix them all.
 */
export abstract class SourcesFileProblemsError extends RelayError {
  /** `about` follows "problems" in the heading of a list, e.g. " with its SFTP sources". */
  constructor(
    readonly file: string,
    readonly problems: readonly ProfileProblem[],
    about = "",
  ) {
    // In the file's order, so they can be fixed top to bottom.
    const lines = [...problems].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)).map(describe);
    super(
      lines.length === 1
        ? (lines[0] ?? "")
        : `${file} has ${lines.length} problems${about}:\n${lines.map((l) => `  - ${l}`).join("\n")}`,
    );
  }
}

function describe(p: ProfileProblem): string {
  const field = p.field === undefined ? "" : `, field ${p.field}`;
  return `${p.where}${field}${p.line === undefined ? "" : ` (line ${p.line})`}: ${p.problem}`;
}
