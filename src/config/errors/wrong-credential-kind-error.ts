import { RelayError } from "../../errors/relay-error.js";
import type { CredentialKind, ExpectedCredentialKind } from "../credential-kind.js";

/**
 * A secret was handed to the wrong service or the wrong use. The two services of the spec share no
 * credentials, so an agent memory network key is never sent to the invoice routing service, nor the
 * reverse; and inside the network a developer key and an agent token are not interchangeable. The message
 * names where the secret came from and at most its first characters, never the secret itself.
 */
export class WrongCredentialKindError extends RelayError {
  readonly code = "CREDENTIAL_WRONG_KIND";

  constructor(
    readonly source: string,
    readonly expected: ExpectedCredentialKind,
    readonly found: CredentialKind,
    secretHint: string,
  ) {
    const crossesServices = (expected === "invoice-api-key") !== (found === "other");
    const why = crossesServices
      ? "the invoice routing service and the agent memory network share no credentials"
      : "a developer key and an agent token are not interchangeable";
    super(
      `${source} ${secretHint} is ${KIND_NAMES[found]}, but ${KIND_NAMES[expected]} is needed here; ${why}. ` +
        fixFor(expected, source),
    );
  }
}

const KIND_NAMES: Readonly<Record<CredentialKind | ExpectedCredentialKind, string>> = {
  "invoice-api-key": "an invoice routing service API key",
  "agentnet-developer-key": 'an agent memory network developer key (prefix ending in "dev_")',
  "agentnet-agent-token": 'an agent memory network agent token (prefix ending in "agt_")',
  other: "not an agent memory network credential",
};

function fixFor(expected: ExpectedCredentialKind, source: string): string {
  switch (expected) {
    case "invoice-api-key":
      return `Set ${source} to the invoice routing service's API key.`;
    case "agentnet-developer-key":
      return "Use the developer key stored by `invoice-relay agentnet register`.";
    case "agentnet-agent-token":
      return "Use the agent token the network issued when the agent was registered.";
  }
}
