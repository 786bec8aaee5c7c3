import { z } from "zod";
import { checkCredential, secretHint, type DeveloperKey } from "../config/credentials.js";
import { MalformedCredentialError } from "../config/errors/malformed-credential-error.js";
import { InvalidTokenRequestError } from "./errors/invalid-token-request-error.js";

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
// The spec gives no length limit; these only stop pasted garbage before it reaches the service.
const MAX_NAME_CHARS = 200;
const MAX_EMAIL_CHARS = 254;

/** Body of POST /api/v1/auth/token, exactly the two fields the spec shows. */
export const tokenRequestSchema = z.strictObject({
  developer_name: z
    .string()
    .trim()
    .min(1, "the developer name (--name) must not be empty")
    .max(MAX_NAME_CHARS, `the developer name (--name) must be at most ${MAX_NAME_CHARS} characters`)
    .refine(
      (name) => !CONTROL_CHARS.test(name),
      "the developer name (--name) must not hold control characters",
    ),
  email: z
    .string()
    .trim()
    .max(MAX_EMAIL_CHARS, `the e-mail address (--email) must be at most ${MAX_EMAIL_CHARS} characters`)
    .pipe(z.email("the e-mail address (--email) must look like name@example.com")),
});

export type TokenRequest = z.output<typeof tokenRequestSchema>;

export interface TokenRequestInput {
  readonly developerName: string;
  readonly email: string;
}

/** Validates what the user typed before anything is sent; every problem is reported at once. */
export function parseTokenRequest(input: TokenRequestInput): TokenRequest {
  const parsed = tokenRequestSchema.safeParse({ developer_name: input.developerName, email: input.email });
  if (parsed.success) return parsed.data;
  throw new InvalidTokenRequestError(parsed.error.issues.map((issue) => issue.message));
}

/** The answer of POST /api/v1/auth/token. Unknown extra fields are dropped. */
const tokenResponseSchema = z.object({
  developer_id: z.string().trim().min(1, "must be a non-empty string"),
  api_key: z.string().min(1, "must be a non-empty string"),
  key_prefix: z.string(),
  note: z.string(),
});

export interface DeveloperKeyGrant {
  readonly developerId: string;
  readonly apiKey: DeveloperKey;
  /** Safe to print: the service's key_prefix when it is a short true prefix of the key, else the key's label. */
  readonly keyPrefix: string;
  /** False when the service's key_prefix was not a short leading part of the key and was replaced. */
  readonly keyPrefixFromService: boolean;
  readonly note: string;
}

/** How much of the key must stay unprinted for a key_prefix from the service to be shown as it is. */
const MIN_HIDDEN_CHARS = 12;

/**
 * Parses the answer body; returns the problems instead of throwing so the caller can word one error. A
 * `key_prefix` that is not a short leading part of the key is not trusted for printing (it could be the
 * whole key), but it does not cost the user the key: the label of the key is shown instead.
 */
export function parseTokenResponse(
  body: unknown,
): DeveloperKeyGrant | { readonly problems: readonly string[] } {
  const parsed = tokenResponseSchema.safeParse(body);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((issue) =>
        issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`,
      ),
    };
  }
  const { developer_id, key_prefix, note } = parsed.data;
  const checked = checkCredential(parsed.data.api_key, "agentnet-developer-key", "api_key");
  if (!checked.ok) {
    const why =
      checked.error instanceof MalformedCredentialError
        ? checked.error.problem
        : `${secretHint(parsed.data.api_key)} is not a developer key: its prefix does not end in "dev_"`;
    return { problems: [`api_key ${why}`] };
  }
  const api_key = checked.value;
  const trusted =
    key_prefix.length > 0 &&
    api_key.startsWith(key_prefix) &&
    api_key.length - key_prefix.length >= MIN_HIDDEN_CHARS;
  return {
    developerId: developer_id,
    apiKey: api_key,
    keyPrefix: trusted ? key_prefix : labelOf(api_key),
    keyPrefixFromService: trusted,
    note,
  };
}

/**
 * The key's label up to and including its `dev_`: a developer key has `dev_` within its first two
 * segments (see credentials.ts), and the first `dev_` is where its label ends.
 */
function labelOf(key: DeveloperKey): string {
  return key.slice(0, key.indexOf("dev_") + "dev_".length);
}
