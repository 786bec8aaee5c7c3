import {
  SourcesFileProblemsError,
  type ProfileProblem,
} from "../../profiles/errors/sources-file-problems-error.js";

/**
 * The `sftp:` sources of the sources file are not valid. Every problem found is listed at once, each
 * naming the file, the source and the field, so one edit fixes them all.
 */
export class RemoteSourceError extends SourcesFileProblemsError {
  readonly code = "REMOTE_SOURCE_INVALID";

  constructor(file: string, problems: readonly ProfileProblem[]) {
    super(file, problems, " with its SFTP sources");
  }
}
