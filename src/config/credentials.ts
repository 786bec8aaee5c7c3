import { z } from "zod";
import type { RelayError } from "../errors/relay-error.js";
import { MalformedCredentialError } from "./errors/malformed-credential-error.js";
import { WrongCredentialKindError } from "./errors/wrong-credential-kind-error.js";
import type { CredentialKind, ExpectedCredentialKind } from "./credential-kind.js";

/**
 * Credentials of the two services of the spec, kept apart by type and checked at runtime.
 *
 * The spec fixes only this much: an agent memory network developer key starts with a fixed prefix ending in
 * `dev_`, an agent token with a fixed prefix ending in `agt_`, and the invoice routing service's key starts
 * with its own fixed "live-key" label. The exact prefixes are not shown.
 *
 * Detection rule (`classifyCredential`):
 * - A key is a leading label followed by a random body. The label is made of `_`-terminated segments;
 *   only the first {@link MAX_LABEL_SEGMENTS} of them are looked at, and only while each is plain ASCII
 *   letters and digits. The last `_`-separated piece is never part of the label.
 * - The first label segment that ends in `dev` makes the secret a developer key; one that ends in `agt`
 *   an agent token (case-sensitive: the prefix is fixed, so its case is too). So `dev_…`, `amn_dev_…` and
 *   `amndev_…` are developer keys, `amn_agt_…` an agent token.
 * - Everything else is "other". `sk_live_9fKdev_x…` stays "other": its label is `sk_live_`, and a `dev_`
 *   inside the random body is never read. A key whose label has two segments can therefore never be
 *   misread, whatever its body holds.
 * - The rule errs towards refusing: a key with a one-segment label whose body happens to begin with
 *   `…dev_` (odds of about 1 in 64³ for a base64url body) would be refused for the invoice service with a
 *   clear message, never sent to the wrong one. An agent-network prefix of three or more segments
 *   (`a_b_dev_`) would not be recognised; the examples the spec points at have at most two.
 * - Surrounding whitespace and a pasted `Bearer ` scheme are ignored for classification, so a secret
 *   copied from a header is still recognised (and then refused as malformed by the parse functions).
 */
export type { CredentialKind, ExpectedCredentialKind } from "./credential-kind.js";

declare const credentialBrand: unique symbol;
type Branded<Kind extends ExpectedCredentialKind> = string & { readonly [credentialBrand]: Kind };

/** Bearer key of the invoice routing service (spec part A). Only {@link parseInvoiceApiKey} makes one. */
export type InvoiceApiKey = Branded<"invoice-api-key">;
/** Agent memory network developer key (spec part B): registers agents, manages the developer account. */
export type DeveloperKey = Branded<"agentnet-developer-key">;
/** Agent memory network agent token (spec part B): every agent action (posting, memory). */
export type AgentToken = Branded<"agentnet-agent-token">;

export const MAX_LABEL_SEGMENTS = 2;
const MAX_CREDENTIAL_CHARS = 4096;
const LABEL_SEGMENT = /^[A-Za-z0-9]+$/;
// Visible ASCII only: anything else cannot travel in an Authorization header unchanged.
const CREDENTIAL_CHARS = /^[\x21-\x7e]+$/;
const BEARER_SCHEME = /^bearer\s+/i;
// Shorter secrets show none of their characters in messages: four of eight would give half away.
const MIN_CHARS_TO_HINT = 16;
const HINT_CHARS = 4;

export function classifyCredential(secret: string): CredentialKind {
  return splitLabel(secret).kind;
}

interface LabelSplit {
  readonly kind: CredentialKind;
  /** The random part after the kind's marker segment; empty for "other". */
  readonly body: string;
}

function splitLabel(secret: string): LabelSplit {
  const segments = secret.trim().replace(BEARER_SCHEME, "").split("_");
  const labelCount = Math.min(MAX_LABEL_SEGMENTS, segments.length - 1);
  for (let i = 0; i < labelCount; i++) {
    const segment = segments[i] ?? "";
    if (!LABEL_SEGMENT.test(segment)) break;
    const body = segments.slice(i + 1).join("_");
    if (segment.endsWith("dev")) return { kind: "agentnet-developer-key", body };
    if (segment.endsWith("agt")) return { kind: "agentnet-agent-token", body };
  }
  return { kind: "other", body: "" };
}

/** `(starting "amn_")`, or nothing of the secret at all when it is short. Never more than 4 characters. */
export function secretHint(secret: string): string {
  const trimmed = secret.trim();
  return trimmed.length >= MIN_CHARS_TO_HINT ? `(starting "${trimmed.slice(0, HINT_CHARS)}")` : "(not shown)";
}

type CheckResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: RelayError };

/** The checks shared by the parse functions and the zod schemas; returns the error instead of throwing. */
export function checkCredential<Kind extends ExpectedCredentialKind>(
  raw: unknown,
  expected: Kind,
  source: string,
): CheckResult<Branded<Kind>> {
  if (typeof raw !== "string" || raw.trim() === "") {
    return { ok: false, error: new MalformedCredentialError(source, "is not set or empty") };
  }
  const secret = raw.trim();
  const { kind, body } = splitLabel(secret);
  const wanted = expected === "invoice-api-key" ? "other" : expected;
  if (kind !== wanted) {
    return { ok: false, error: new WrongCredentialKindError(source, expected, kind, secretHint(secret)) };
  }
  if (secret.length > MAX_CREDENTIAL_CHARS) {
    return {
      ok: false,
      error: new MalformedCredentialError(source, `is longer than ${MAX_CREDENTIAL_CHARS} characters`),
    };
  }
  if (!CREDENTIAL_CHARS.test(secret)) {
    return {
      ok: false,
      error: new MalformedCredentialError(source, "holds spaces, control or non-ASCII characters"),
    };
  }
  if (kind !== "other" && body === "") {
    return { ok: false, error: new MalformedCredentialError(source, "has nothing after its prefix") };
  }
  return { ok: true, value: secret as Branded<Kind> };
}

function orThrow<T>(result: CheckResult<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}

/** For INVOICE_API_KEY: refuses agent-network developer keys and agent tokens. */
export function parseInvoiceApiKey(raw: unknown, source = "INVOICE_API_KEY"): InvoiceApiKey {
  return orThrow(checkCredential(raw, "invoice-api-key", source));
}

/** Refuses the invoice key, agent tokens and anything else whose prefix does not end in `dev_`. */
export function parseDeveloperKey(raw: unknown, source = "the developer key"): DeveloperKey {
  return orThrow(checkCredential(raw, "agentnet-developer-key", source));
}

/** Refuses the invoice key, developer keys and anything else whose prefix does not end in `agt_`. */
export function parseAgentToken(raw: unknown, source = "the agent token"): AgentToken {
  return orThrow(checkCredential(raw, "agentnet-agent-token", source));
}

/**
 * The same checks as a zod schema, for a configuration schema that reports one message per bad
 * variable; the issue message is the typed error's message, which never holds the secret.
 */
export function credentialSchema<Kind extends ExpectedCredentialKind>(expected: Kind, source: string) {
  return z.unknown().transform((raw, ctx): Branded<Kind> => {
    const result = checkCredential(raw, expected, source);
    if (result.ok) return result.value;
    ctx.addIssue({ code: "custom", message: result.error.message, params: { code: result.error.code } });
    return z.NEVER;
  });
}
