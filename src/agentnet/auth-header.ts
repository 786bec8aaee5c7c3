import { classifyCredential, secretHint, type AgentToken, type DeveloperKey } from "../config/credentials.js";
import { WrongCredentialKindError } from "../config/errors/wrong-credential-kind-error.js";

/**
 * The Authorization value for a request to the agent memory network. The types already keep the invoice
 * key out; the runtime check is for values that reached here through a cast or an untyped caller, since
 * sending the invoice key to another service cannot be taken back.
 */
export function agentnetAuthorization(credential: DeveloperKey | AgentToken): string {
  const kind = classifyCredential(credential);
  if (kind === "other") {
    throw new WrongCredentialKindError(
      "the credential for the agent memory network",
      "agentnet-developer-key",
      kind,
      secretHint(credential),
    );
  }
  return `Bearer ${credential}`;
}
