/** What a secret looks like, by its prefix (src/config/credentials.ts says how it is told). */
export type CredentialKind = "agentnet-developer-key" | "agentnet-agent-token" | "other";

/** What a caller asks for; an invoice key is any well-formed secret that is not an agent-network one. */
export type ExpectedCredentialKind = "invoice-api-key" | "agentnet-developer-key" | "agentnet-agent-token";
