// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;
// Anything after a "…dev_" or "…agt_" label: a service's error text could quote a key back.
const CREDENTIAL_BODY = /((?:dev|agt)_)[A-Za-z0-9_\-.~+/=]{4,}/g;

/**
 * Text from the service made safe for one terminal line: control characters (and so terminal escape
 * sequences) shown escaped, length bounded.
 */
export function printable(text: string, maxChars = 300): string {
  const safe = text.replace(CONTROL_CHARS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return safe.length > maxChars ? `${safe.slice(0, maxChars)}…` : safe;
}

/** Masks the random part of anything shaped like an agent-network credential, for text of unknown content. */
export function redactCredentials(text: string): string {
  return text.replace(CREDENTIAL_BODY, "$1[redacted]");
}
