import { RelayError } from "../../errors/relay-error.js";

/** An http:// URL to a host off this machine: the developer key would cross the network in clear. */
export class InsecureApiUrlError extends RelayError {
  readonly code = "AGENTNET_API_URL_INSECURE";

  constructor(readonly origin: string) {
    super(
      `The agent memory network URL must use https:// for a host that is not loopback (got ${origin}): ` +
        "the service answers with a developer key. Use https, or pass --allow-insecure-http if you accept " +
        "the key crossing the network in clear.",
    );
  }
}
