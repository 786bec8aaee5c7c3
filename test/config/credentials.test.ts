import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  classifyCredential,
  credentialSchema,
  parseAgentToken,
  parseDeveloperKey,
  parseInvoiceApiKey,
  type CredentialKind,
} from "../../src/config/credentials.js";
import { MalformedCredentialError } from "../../src/config/errors/malformed-credential-error.js";
import { WrongCredentialKindError } from "../../src/config/errors/wrong-credential-kind-error.js";

const INVOICE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
const DEV_KEY = "amn_dev_9fKq2LmX7vB0zR4tY8wE1uI3";
const AGENT_TOKEN = "amn_agt_Hh7Jk2Lm9Nn4Pp6Qq8Rr1Ss3";

/** The random part of real keys: base64url, which includes "_" (so a body can hold "dev_" anywhere). */
const body = fc.string({
  unit: fc.constantFrom(...Array.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")),
  minLength: 16,
  maxLength: 64,
});
/** A label segment a vendor might put before the marker: lowercase letters and digits. */
const vendor = fc.string({
  unit: fc.constantFrom(...Array.from("abcdefghijklmnopqrstuvwxyz0123456789")),
  minLength: 1,
  maxLength: 8,
});

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    if (error instanceof Error) return error;
  }
  throw new Error("expected a throw");
}

describe("classifyCredential", () => {
  it.each<[string, CredentialKind]>([
    ["dev_9fKq2LmX7vB0", "agentnet-developer-key"],
    ["amn_dev_9fKq2LmX7vB0", "agentnet-developer-key"],
    ["amndev_9fKq2LmX7vB0", "agentnet-developer-key"],
    ["dev_", "agentnet-developer-key"],
    ["agt_Hh7Jk2Lm9Nn4", "agentnet-agent-token"],
    ["amn_agt_Hh7Jk2Lm9Nn4", "agentnet-agent-token"],
    ["dev_agt_x", "agentnet-developer-key"],
    ["  amn_dev_9fKq2LmX7vB0\n", "agentnet-developer-key"],
    ["Bearer amn_dev_9fKq2LmX7vB0", "agentnet-developer-key"],
    [INVOICE_KEY, "other"],
    ["sk_live_dev_9fKq2LmX7vB0", "other"],
    ["sk_live_9fKdev_q2LmX7vB0", "other"],
    ["sk_live_abc_agt_q2LmX7vB0", "other"],
    ["a_b_dev_9fKq2LmX7vB0", "other"],
    ["a-b_dev_9fKq2LmX7vB0", "other"],
    ["DEV_9fKq2LmX7vB0", "other"],
    ["9fKq2LmX7vB0dev", "other"],
    ["dev", "other"],
    ["", "other"],
  ])("when the secret is %j, then it is %s", (secret, kind) => {
    expect(classifyCredential(secret)).toBe(kind);
  });

  it('when an invoice key "sk_live_…" has "dev_" or "agt_" anywhere in its random part, then it is still "other"', () => {
    fc.assert(
      fc.property(body, body, fc.constantFrom("dev_", "agt_", "xdev_", "_dev_"), (head, tail, marker) => {
        expect(classifyCredential(`sk_live_${head}${marker}${tail}`)).toBe("other");
      }),
    );
  });

  it("when a key is a one- or two-segment label ending in dev_ or agt_ plus any body, then its kind is found", () => {
    fc.assert(
      fc.property(fc.option(vendor, { nil: undefined }), fc.boolean(), body, (prefix, dev, random) => {
        const label = `${prefix === undefined ? "" : `${prefix}_`}${dev ? "dev" : "agt"}_`;
        expect(classifyCredential(`${label}${random}`)).toBe(
          dev ? "agentnet-developer-key" : "agentnet-agent-token",
        );
      }),
    );
  });
});

describe("parse functions", () => {
  it("when each credential goes where it belongs, then it is accepted as it is (trimmed)", () => {
    expect(parseInvoiceApiKey(` ${INVOICE_KEY}\n`)).toBe(INVOICE_KEY);
    expect(parseDeveloperKey(DEV_KEY)).toBe(DEV_KEY);
    expect(parseAgentToken(AGENT_TOKEN)).toBe(AGENT_TOKEN);
  });

  it.each([
    [
      "the invoice client",
      "a developer key",
      () => parseInvoiceApiKey(DEV_KEY),
      DEV_KEY,
      "share no credentials",
    ],
    [
      "the invoice client",
      "an agent token",
      () => parseInvoiceApiKey(AGENT_TOKEN),
      AGENT_TOKEN,
      "share no credentials",
    ],
    [
      "the developer-key parser",
      "the invoice key",
      () => parseDeveloperKey(INVOICE_KEY),
      INVOICE_KEY,
      "share no credentials",
    ],
    [
      "the developer-key parser",
      "an agent token",
      () => parseDeveloperKey(AGENT_TOKEN),
      AGENT_TOKEN,
      "not interchangeable",
    ],
    [
      "the agent-token parser",
      "the invoice key",
      () => parseAgentToken(INVOICE_KEY),
      INVOICE_KEY,
      "share no credentials",
    ],
    [
      "the agent-token parser",
      "a developer key",
      () => parseAgentToken(DEV_KEY),
      DEV_KEY,
      "not interchangeable",
    ],
  ])(
    "when %s is given %s, then it refuses with CREDENTIAL_WRONG_KIND and shows at most 4 characters",
    (_w, _k, run, secret, why) => {
      const error = thrown(run);
      expect(error).toBeInstanceOf(WrongCredentialKindError);
      expect(error).toMatchObject({ code: "CREDENTIAL_WRONG_KIND" });
      expect(error.message).toContain(why);
      expect(error.message).toContain(`(starting "${secret.slice(0, 4)}")`);
      expect(error.message).not.toContain(secret.slice(0, 5));
    },
  );

  it("when INVOICE_API_KEY holds a developer key, then the message names the variable and the fix", () => {
    expect(thrown(() => parseInvoiceApiKey(DEV_KEY)).message).toMatch(
      /^INVOICE_API_KEY \(starting "amn_"\) is an agent memory network developer key .* Set INVOICE_API_KEY to the invoice routing service's API key\.$/,
    );
  });

  it.each([
    ["undefined", undefined, "is not set or empty"],
    ["blank", "   ", "is not set or empty"],
    ["holding a space", "sk_live_abc def", "spaces"],
    ["holding a control character", "sk_live_abc\u0007def", "control"],
    ["non-ASCII", "sk_live_abcdéf", "non-ASCII"],
    ["far too long", `sk_live_${"a".repeat(5000)}`, "longer than"],
    ["a pasted header", `Bearer ${INVOICE_KEY}`, "spaces"],
  ])("when the invoice key is %s, then CREDENTIAL_MALFORMED says what is wrong", (_, raw, hint) => {
    const error = thrown(() => parseInvoiceApiKey(raw));
    expect(error).toBeInstanceOf(MalformedCredentialError);
    expect(error).toMatchObject({ code: "CREDENTIAL_MALFORMED" });
    expect(error.message).toContain(hint);
  });

  it("when a developer key has nothing after its prefix, then it is malformed", () => {
    expect(thrown(() => parseDeveloperKey("amn_dev_"))).toMatchObject({ code: "CREDENTIAL_MALFORMED" });
  });

  it("when a short secret is refused, then none of its characters are shown", () => {
    const error = thrown(() => parseInvoiceApiKey("dev_x1y2"));
    expect(error.message).toContain("(not shown)");
    expect(error.message).not.toContain("dev_x");
  });

  it("when a parse function refuses a secret, then the message holds neither the secret nor its random part", () => {
    // Each parser with labels it must refuse whatever random part follows: other kinds, a pasted header.
    const refusals: readonly (readonly [(raw: unknown) => unknown, string])[] = [
      [parseInvoiceApiKey, "amn_dev_"],
      [parseInvoiceApiKey, "dev_"],
      [parseInvoiceApiKey, "amn_agt_"],
      [parseDeveloperKey, "sk_live_"],
      [parseDeveloperKey, "amn_agt_"],
      [parseAgentToken, "sk_live_"],
      [parseAgentToken, "amn_dev_"],
      [parseAgentToken, "dev_"],
      [parseInvoiceApiKey, "Bearer sk_live_"],
      [parseDeveloperKey, "Bearer amn_dev_"],
      [parseAgentToken, "Bearer amn_agt_"],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...refusals), body, ([parse, label], random) => {
        const error = thrown(() => parse(`${label}${random}`));
        expect(error).toHaveProperty("code");
        expect(error.message).not.toContain(random);
      }),
    );
  });
});

describe("credentialSchema", () => {
  it("when used in a zod schema, then a refusal is one issue whose message is the typed error's", () => {
    const schema = credentialSchema("invoice-api-key", "INVOICE_API_KEY");
    expect(schema.parse(INVOICE_KEY)).toBe(INVOICE_KEY);
    const result = schema.safeParse(DEV_KEY);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.message).toBe(thrown(() => parseInvoiceApiKey(DEV_KEY)).message);
    expect(JSON.stringify(result.error?.issues)).not.toContain(DEV_KEY);
  });
});
