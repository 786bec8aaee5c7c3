import { RelayError } from "../../errors/relay-error.js";

/** The developer name or e-mail address cannot be sent: nothing was requested. */
export class InvalidTokenRequestError extends RelayError {
  readonly code = "AGENTNET_TOKEN_REQUEST_INVALID";

  constructor(readonly problems: readonly string[]) {
    super(`Cannot request a developer key: ${problems.join("; ")}. Nothing was sent.`);
  }
}
