import { describe, expect, it } from "vitest";
import { agentnetAuthorization } from "../../src/agentnet/auth-header.js";
import {
  parseAgentToken,
  parseDeveloperKey,
  parseInvoiceApiKey,
  type DeveloperKey,
} from "../../src/config/credentials.js";
import { WrongCredentialKindError } from "../../src/config/errors/wrong-credential-kind-error.js";

const INVOICE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

describe("agentnetAuthorization", () => {
  it("when given a developer key or an agent token, then it is the bearer header value", () => {
    const key = parseDeveloperKey("amn_dev_9fKq2LmX7vB0zR4tY8wE1uI3");
    const token = parseAgentToken("amn_agt_Hh7Jk2Lm9Nn4Pp6Qq8Rr1Ss3");
    expect(agentnetAuthorization(key)).toBe("Bearer amn_dev_9fKq2LmX7vB0zR4tY8wE1uI3");
    expect(agentnetAuthorization(token)).toBe("Bearer amn_agt_Hh7Jk2Lm9Nn4Pp6Qq8Rr1Ss3");
  });

  it("when the invoice key is forced past the types, then it is refused at runtime without being shown", () => {
    const invoiceKey = parseInvoiceApiKey(INVOICE_KEY);
    // @ts-expect-error an InvoiceApiKey is not a DeveloperKey: the compiler refuses it too.
    const typed: DeveloperKey = invoiceKey;
    const run = () => agentnetAuthorization(typed);
    expect(run).toThrow(WrongCredentialKindError);
    expect(run).toThrow("share no credentials");
    expect(run).not.toThrow(INVOICE_KEY);
  });
});
