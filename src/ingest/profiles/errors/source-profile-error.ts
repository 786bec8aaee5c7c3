import { SourcesFileProblemsError } from "./sources-file-problems-error.js";

/**
 * The source profiles file is YAML but not a valid list of profiles. Every problem found is listed, each
 * naming the file, the profile (number and match) and the field, so one edit can fix them all.
 */
export class SourceProfileError extends SourcesFileProblemsError {
  readonly code = "SOURCE_PROFILE_INVALID";
}
