import { RelayError } from "../../errors/relay-error.js";

/**
 * No usable answer from POST /api/v1/auth/token: the service was unreachable, kept failing (5xx, 429) or
 * the answer was lost, and the attempts are spent or the failure is not one to retry.
 */
export class AgentnetUnavailableError extends RelayError {
  readonly code = "AGENTNET_UNAVAILABLE";

  constructor(
    readonly url: string,
    readonly attempts: number,
    readonly lastProblem: string,
    /** True when some attempt may have reached the service without a usable answer: a key may have been issued. */
    readonly mayHaveIssuedKey: boolean,
    options?: ErrorOptions,
  ) {
    super(
      `No developer key from ${url} after ${attempts} attempt${attempts === 1 ? "" : "s"} (last: ${lastProblem}). ` +
        (mayHaveIssuedKey
          ? "Some attempt may have reached the service without a usable answer, so it may have issued a key " +
            "nobody received; nothing was stored. "
          : "") +
        "Check the URL and the service's status, then run the command again.",
      options,
    );
  }
}
