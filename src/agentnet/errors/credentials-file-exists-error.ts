import { RelayError } from "../../errors/relay-error.js";

/** A developer key is already stored; the service shows a key only once, so it is not overwritten silently. */
export class CredentialsFileExistsError extends RelayError {
  readonly code = "AGENTNET_CREDENTIALS_EXIST";

  constructor(
    readonly path: string,
    readonly holds: string,
  ) {
    super(
      `${path} already exists (${holds}). Nothing was requested. The service shows a key only once, so ` +
        "replacing it loses the old one: pass --force to replace it, or --credentials FILE to store the new " +
        "key elsewhere.",
    );
  }
}
