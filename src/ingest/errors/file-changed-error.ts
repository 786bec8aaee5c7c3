import { RelayError } from "../../errors/relay-error.js";

/** What was claimed of a drop file: its length and the sha256 of those bytes, hex. */
export interface ClaimedContent {
  readonly size: number;
  readonly sha256: string;
}

/**
 * A claimed file is no longer what was claimed: it grew (a writer paused longer than SETTLE_MS, then went
 * on) or was rewritten. Only the claimed bytes were ingested; the file is kept in processing/ and its
 * batch is never reported as complete, so neither the rest nor a changed row is lost or sent silently.
 */
export class FileChangedError extends RelayError {
  readonly code = "FILE_CHANGED_AFTER_CLAIM";

  constructor(
    readonly file: string,
    readonly claimedPath: string,
    readonly claimed: ClaimedContent,
    readonly nowBytes: number,
    /** Whether the first `claimed.size` bytes are still those claimed (the file only grew). */
    readonly prefixIntact: boolean,
  ) {
    super(
      `${file} changed after it was claimed (claimed ${claimed.size} bytes, sha256 ${claimed.sha256}; ` +
        `now ${nowBytes} bytes${prefixIntact ? ", the claimed bytes unchanged" : ", the claimed bytes rewritten"}): ` +
        "it was still being written. Only the claimed bytes were ingested and sent; nothing of the rest was. " +
        `The file is kept as ${claimedPath} and its batch is not reported. Once the file is complete, move ` +
        `it back into the drop folder as ${file}: rows already sent come out duplicate, the others are sent. ` +
        "To have files picked up only once complete, set DONE_MARKER_SUFFIX.",
    );
  }
}
