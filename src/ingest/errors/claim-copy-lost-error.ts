import { RelayError } from "../../errors/relay-error.js";

/**
 * `ingest FILE` copied a file into processing/, and the copy was removed before it could be claimed: a
 * pass took it for the leftover of a copier that died (it had not been written to for an hour).
 */
export class ClaimCopyLostError extends RelayError {
  readonly code = "CLAIM_COPY_LOST";

  constructor(
    readonly source: string,
    readonly copy: string,
  ) {
    super(
      `${source}: its copy into processing/ (${copy}) was removed before it was complete, taken for an ` +
        "interrupted copy; nothing was claimed and the file is still in place: run ingest again",
    );
  }
}
