import { RelayError } from "../../../errors/relay-error.js";

/** SOURCES_FILE names a file that is not there or cannot be read; nothing is claimed until it is fixed. */
export class SourcesFileMissingError extends RelayError {
  readonly code = "SOURCES_FILE_MISSING";

  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(
      `SOURCES_FILE ${file} ${reason}. Point SOURCES_FILE at the source profiles file ` +
        '(docs/configuration.md, "Source profiles"), or unset it to read files without profiles.',
    );
  }
}
