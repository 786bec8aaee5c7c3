import { RelayError } from "../../../errors/relay-error.js";
import type { ProfileProblem } from "../../profiles/errors/source-profile-error.js";

/**
 * The `sftp:` sources of the sources file are not valid. Every problem found is listed at once, each
 * naming the file, the source and the field, so one edit fixes them all.
 */
export class RemoteSourceError extends RelayError {
  readonly code = "REMOTE_SOURCE_INVALID";

  constructor(
    readonly file: string,
    readonly problems: readonly ProfileProblem[],
  ) {
    const lines = [...problems].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)).map(describe);
    super(
      lines.length === 1
        ? (lines[0] ?? "")
        : `${file} has ${lines.length} problems with its SFTP sources:\n${lines.map((l) => `  - ${l}`).join("\n")}`,
    );
  }
}

function describe(p: ProfileProblem): string {
  const field = p.field === undefined ? "" : `, field ${p.field}`;
  return `${p.where}${field}${p.line === undefined ? "" : ` (line ${p.line})`}: ${p.problem}`;
}
