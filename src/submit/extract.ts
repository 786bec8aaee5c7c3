/**
 * Where the correlation ID and the ruleset version are found in an answer. By default, the lists of
 * CORRELATION_ID_HEADERS, CORRELATION_ID_FIELDS and RULESET_VERSION_FIELDS in docs/configuration.md.
 */
export interface ExtractionRules {
  readonly correlationIdHeaders: readonly string[];
  readonly correlationIdFields: readonly string[];
  readonly rulesetVersionFields: readonly string[];
}

export const DEFAULT_EXTRACTION_RULES: ExtractionRules = {
  correlationIdHeaders: ["x-request-id", "x-correlation-id", "request-id", "correlation-id"],
  correlationIdFields: ["correlation_id", "request_id", "correlationId", "requestId"],
  rulesetVersionFields: ["ruleset_version", "ruleset.version", "outcome.ruleset_version", "version"],
};

type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The first present of the configured headers, then body fields; undefined if none. */
export function extractCorrelationId(
  rules: ExtractionRules,
  headers: Headers,
  body: unknown,
): string | undefined {
  for (const name of rules.correlationIdHeaders) {
    const first = firstHeaderValue(headers[name.toLowerCase()]);
    if (typeof first === "string" && first.trim() !== "") return first.trim();
  }
  return firstField(rules.correlationIdFields, body);
}

export function extractRulesetVersion(rules: ExtractionRules, body: unknown): string | undefined {
  return firstField(rules.rulesetVersionFields, body);
}

/** A header's value, or the first of a repeated header's values. */
export function firstHeaderValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" ? value : value?.[0];
}

function firstField(paths: readonly string[], body: unknown): string | undefined {
  for (const path of paths) {
    const value = at(body, path);
    if (typeof value === "string" && value.trim() !== "") return value.trim();
    if (typeof value === "number" && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

function at(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split(".")) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
