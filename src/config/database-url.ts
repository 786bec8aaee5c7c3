/**
 * RESULTS_DATABASE_URL, the PostgreSQL of the results of record: a `postgres://` URL whose credentials
 * (userinfo password, `?password=`, `?sslpassword=`) are secrets. It is shown only through safeUrl and
 * masked in logs through urlCredentials (src/config/url-credentials.ts).
 */
export const DATABASE_URL_PATTERN = /^postgres(?:ql)?:\/\//;

export const DATABASE_URL_SETTING = "RESULTS_DATABASE_URL";
