/**
 * RESULTS_DATABASE_URL, the PostgreSQL of the results of record: a `postgres://` URL whose password is a
 * secret. These are the only ways its text reaches a message or a log.
 */
export const DATABASE_URL_PATTERN = /^postgres(?:ql)?:\/\//;

/** The URL without its password (`***`), for messages and logs; nothing of it when it does not parse. */
export function safeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable RESULTS_DATABASE_URL)";
  }
}

/**
 * Only the host (and port) of the URL, for messages that must name where PostgreSQL is and can do
 * without the rest: no user, password, database or parameters can leak through it.
 */
export function databaseHost(url: string): string {
  try {
    return new URL(url).host || "(no host in RESULTS_DATABASE_URL)";
  } catch {
    return "(unparseable RESULTS_DATABASE_URL)";
  }
}

/**
 * The password the URL carries, as written and decoded, for the logger to mask wherever it appears (an
 * error text may quote it); none when the URL has none.
 */
export function databaseUrlSecrets(url: string | undefined): string[] {
  if (url === undefined) return [];
  try {
    const raw = new URL(url).password;
    if (raw === "") return [];
    const decoded = safeDecode(raw);
    return decoded === raw ? [raw] : [raw, decoded];
  } catch {
    return [];
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
