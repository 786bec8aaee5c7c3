/**
 * RESULTS_DATABASE_URL, the PostgreSQL of the results of record: a `postgres://` URL whose credentials
 * (userinfo password, `?password=`, `?sslpassword=`) are secrets. It is shown only through safeUrl and
 * masked in logs through urlCredentials (src/config/url-credentials.ts).
 */
export const DATABASE_URL_PATTERN = /^postgres(?:ql)?:\/\//;

export const DATABASE_URL_SETTING = "RESULTS_DATABASE_URL";

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
