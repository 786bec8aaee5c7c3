import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maskUrlCredentials, safeUrl, urlCredentials } from "../../src/config/url-credentials.js";
import { createLogger } from "../../src/log/logger.js";
import { leakedSecrets, secretUrlArb, type Scheme } from "../support/url-secrets.js";

/** What the drivers read from a URL as credentials: the userinfo password and the credential parameters. */
function driverCredentials(url: string): string[] {
  const parsed = new URL(url);
  const params = [...parsed.searchParams].filter(([name]) => /password/i.test(name)).map(([, v]) => v);
  return [...(parsed.password === "" ? [] : [decodeURIComponent(parsed.password)]), ...params];
}

const urls = fc.oneof(
  ...(["postgres", "redis"] as const satisfies readonly Scheme[]).map((scheme) =>
    fc
      .tuple(
        fc.constantFrom("", "relay", "a@b", "us%3Aer"),
        fc.constantFrom("db.example:5432", "10.0.0.1:6379", "[::1]:6380", "host"),
        fc.constantFrom("", "/", "/relay", "/0"),
      )
      .chain(([user, host, path]) => secretUrlArb(scheme, user, host, path)),
  ),
);

describe("URL credentials", () => {
  it("when a URL carries secrets in any accepted position and encoding, then its masked form holds none and keeps host and path", () => {
    fc.assert(
      fc.property(urls, (u) => {
        // The generator's secrets are what the drivers read (or their written forms).
        const read = driverCredentials(u.url);
        expect(read.length).toBeGreaterThan(0);
        for (const secret of read) expect(u.secrets).toContain(secret);
        const shown = safeUrl(u.url, "RESULTS_DATABASE_URL");
        expect(leakedSecrets(shown, u.secrets)).toEqual([]);
        expect(shown).toContain(new URL(u.url).host);
        const quoted = maskUrlCredentials(`Redis at ${u.url} is unreachable`);
        expect(leakedSecrets(quoted, u.secrets)).toEqual([]);
        expect(quoted.startsWith(`Redis at ${shown.split("?")[0] ?? ""}`)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("when a log line quotes the secrets of a URL in any form, then the logger built with its credentials masks them all", () => {
    fc.assert(
      fc.property(urls, (u) => {
        const lines: string[] = [];
        const logger = createLogger({
          format: "json",
          secrets: urlCredentials(u.url),
          destination: { write: (line: string) => lines.push(line) },
        });
        logger.error({ detail: u.secrets.join(" | "), parsed: new URL(u.url).href }, "driver said");
        expect(leakedSecrets(lines.join(""), u.secrets)).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it("when a parameter only looks like a credential's neighbour, then it is shown: sslkey, sslcert and sslrootcert are paths", () => {
    const url =
      "postgres://db/relay?sslkey=/etc/k.pem&sslcert=/etc/c.pem&sslrootcert=/etc/ca.pem&sslmode=verify-full";
    expect(safeUrl(url, "RESULTS_DATABASE_URL")).toBe(url);
  });

  it("when a URL is repeated, percent-encodes a parameter's name or ends in a fragment, then each credential is masked", () => {
    expect(maskUrlCredentials("redis://:a1b2c3@h:1/0?%70assword=d4e5&password=f6g7#x")).toBe(
      "redis://:***@h:1/0?%70assword=***&password=***",
    );
    expect(maskUrlCredentials("postgres://u:p@ss:w@h/db?sslpassword=z+z")).toBe(
      "postgres://u:***@h/db?sslpassword=***",
    );
  });

  it("when a value is not a URL at all, then only the setting's name is shown", () => {
    expect(safeUrl("redis://u:p/w@h:x", "REDIS_URL")).toBe("(REDIS_URL: not a valid URL)");
  });
});
