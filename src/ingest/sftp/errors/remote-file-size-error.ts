import { RelayError } from "../../../errors/relay-error.js";

/**
 * A file on the SFTP server sent other than the size it was listed with, while the server still says
 * that size: it ended before it (`fewer`), or held bytes past it (`more`: no byte past the listed size
 * is ever read, so a file the server makes up as it is read cannot fill this machine's disk). Nothing of
 * it is taken; it stays where it is, named at each pass, and is taken once it reads as listed.
 */
export class RemoteFileSizeError extends RelayError {
  readonly code = "SFTP_FILE_SIZE";

  constructor(
    readonly path: string,
    readonly listed: number,
    readonly held: { readonly kind: "fewer"; readonly bytes: number } | { readonly kind: "more" },
  ) {
    super(
      held.kind === "fewer"
        ? `${path} was listed with ${listed} bytes, but the server ended it after ${held.bytes}; nothing ` +
            "of it is taken. If the partner is replacing it, it is taken once it has settled; if not, ask " +
            "the server's operator why its listing and its content disagree"
        : `${path} holds more than the ${listed} bytes it was listed with; no more than those were read, ` +
            "and nothing of it is taken. If the partner is still writing it, it is taken once it has " +
            "settled; if not, ask the server's operator why its listing and its content disagree",
    );
  }
}
