import { RelayError } from "../../errors/relay-error.js";

/** The credentials file cannot be read, written or understood; `problem` says which and what to do. */
export class CredentialsFileError extends RelayError {
  readonly code = "AGENTNET_CREDENTIALS_FILE";

  constructor(
    readonly path: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`${path}: ${problem}`, options);
  }
}
