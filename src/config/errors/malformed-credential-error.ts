import { RelayError } from "../../errors/relay-error.js";

/** A secret is empty, too long or holds characters no bearer credential can carry; `problem` says which. */
export class MalformedCredentialError extends RelayError {
  readonly code = "CREDENTIAL_MALFORMED";

  constructor(
    readonly source: string,
    readonly problem: string,
  ) {
    super(`${source} ${problem}. Copy the credential again, without quotes, spaces or the "Bearer " scheme.`);
  }
}
