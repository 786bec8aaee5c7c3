import { RelayError } from "../../errors/relay-error.js";

/** The service answered POST /api/v1/auth/token with a final non-2xx status (4xx other than 429, 3xx). */
export class AgentnetRefusedError extends RelayError {
  readonly code = "AGENTNET_REQUEST_REFUSED";

  constructor(
    readonly url: string,
    readonly status: number,
    /** Start of the service's answer body, control characters escaped; the spec shows no error shape. */
    readonly detail: string,
  ) {
    super(
      `The agent memory network refused the developer key request (HTTP ${status} from ${url})${
        detail === "" ? "" : `: ${detail}`
      }. ${hintFor(status)}`,
    );
  }
}

function hintFor(status: number): string {
  if (status >= 300 && status < 400)
    return "Redirects are not followed: set --api-url to the service's final URL.";
  if (status === 401 || status === 403) {
    return "The spec shows this request without credentials; check that --api-url points at the agent memory network.";
  }
  if (status === 404 || status === 405)
    return "Check that --api-url is the service's base URL, without /api/v1.";
  return "Check the developer name and e-mail address, then run the command again.";
}
