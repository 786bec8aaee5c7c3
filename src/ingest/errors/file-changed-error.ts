import { RelayError } from "../../errors/relay-error.js";

/** What was claimed of a drop file: its length and the sha256 of those bytes, hex. */
export interface ClaimedContent {
  readonly size: number;
  readonly sha256: string;
}

/**
 * A claimed file is no longer what was claimed: it grew (a writer paused longer than SETTLE_MS, then went
 * on) or was rewritten. Only the claimed bytes were ingested; once the file has settled it is taken again,
 * whole, as a new batch (src/use-cases/take-again.ts), so neither the rest nor a changed row is lost or
 * sent silently. A rewritten file's batch is `changed`: never reported as complete.
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
        "it was still being written. Only the claimed bytes were ingested and sent. Once the file has settled " +
        "(SETTLE_MS, or its done-marker) it is taken again by itself, whole, as a new batch: rows already sent " +
        "come out duplicate, rows rewritten in place are decided as in a re-drop (conflict after a success), " +
        `the others are sent; nothing to do. Until then it is kept as ${claimedPath}. To have files picked up ` +
        "only once complete, upload them under a .part name and rename them, or set DONE_MARKER_SUFFIX.",
    );
  }
}
