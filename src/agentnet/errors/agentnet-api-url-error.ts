import { RelayError } from "../../errors/relay-error.js";

/** The agent memory network's base URL is missing or is not an absolute http(s) URL. */
export class AgentnetApiUrlError extends RelayError {
  readonly code = "AGENTNET_API_URL_INVALID";

  constructor(readonly problem: string) {
    super(
      `The agent memory network URL ${problem}. Pass --api-url https://… or set AGENTNET_API_URL ` +
        "to the service's base URL (requests go to {url}/api/v1/…).",
    );
  }
}
