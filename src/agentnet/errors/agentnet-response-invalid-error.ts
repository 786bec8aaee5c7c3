import { RelayError } from "../../errors/relay-error.js";

/**
 * The service answered 2xx, but not with the body part B of the spec describes. The key (if any) was
 * shown only in that answer and was not stored, so the message says how to get another.
 */
export class AgentnetResponseInvalidError extends RelayError {
  readonly code = "AGENTNET_RESPONSE_INVALID";

  constructor(
    readonly url: string,
    readonly status: number,
    readonly problem: string,
  ) {
    super(
      `The agent memory network answered HTTP ${status} from ${url}, but ${problem}. The service may have ` +
        "issued a developer key in that answer; it was not stored. Check that --api-url points at the agent " +
        "memory network, then run the command again (with --force if a key is already stored).",
    );
  }
}
