import { RelayError } from "../../../errors/relay-error.js";

/** The source profiles file is not YAML (or not one YAML document); `line` is 1-based. */
export class SourcesSyntaxError extends RelayError {
  readonly code = "SOURCES_FILE_SYNTAX";

  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly problem: string,
  ) {
    super(
      `${file}${line === undefined ? "" : ` line ${line}`}: not valid YAML: ${problem}. ` +
        'Fix the file; its shape is in docs/configuration.md, "Source profiles".',
    );
  }
}
