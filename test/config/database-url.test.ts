import { describe, expect, it } from "vitest";
import { safeUrl, urlCredentials } from "../../src/config/url-credentials.js";
import { loadConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log/logger.js";

describe("RESULTS_DATABASE_URL", () => {
  it("when it is unset, then the configuration has no database and loads as before", () => {
    expect(loadConfig({}).resultsDatabaseUrl).toBeUndefined();
  });

  it("when it is a postgres:// or postgresql:// URL, then it is taken as written", () => {
    for (const url of ["postgres://relay:pw@db:5432/relay", "postgresql://db/relay?sslmode=require"])
      expect(loadConfig({ RESULTS_DATABASE_URL: url }).resultsDatabaseUrl).toBe(url);
  });

  it("when it is another kind of URL, then loading fails without quoting it", () => {
    expect(() => loadConfig({ RESULTS_DATABASE_URL: "mysql://relay:hunter2-pw@db/relay" })).toThrow(
      /RESULTS_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL$/m,
    );
    try {
      loadConfig({ RESULTS_DATABASE_URL: "mysql://relay:hunter2-pw@db/relay" });
    } catch (error) {
      expect(String(error)).not.toContain("hunter2-pw");
    }
  });

  it("when its password holds / or # unencoded, so that no parser reads it, then loading fails naming the setting and how to encode it, not later as a database that does not answer", () => {
    for (const url of ["postgres://relay:hun/ter2@db:5432/relay", "postgresql://relay:hun#ter2@db/relay"]) {
      expect(() => loadConfig({ RESULTS_DATABASE_URL: url }), url).toThrow(
        /RESULTS_DATABASE_URL is not a valid URL: percent-encode/,
      );
      expect(() => loadConfig({ RESULTS_DATABASE_URL: url }), url).not.toThrow(/hun|ter2/);
    }
    expect(
      loadConfig({ RESULTS_DATABASE_URL: "postgres://relay@/relay?host=/run/pg" }).resultsDatabaseUrl,
    ).toBe("postgres://relay@/relay?host=/run/pg");
  });

  it("when it is shown, then its password is masked and the rest is kept", () => {
    const shown = (url: string) => safeUrl(url, "RESULTS_DATABASE_URL");
    expect(shown("postgres://relay:s%40cret@db:5432/relay")).toBe("postgres://relay:***@db:5432/relay");
    expect(shown("postgres://db/relay?password=s3cret&sslmode=require")).toBe(
      "postgres://db/relay?password=***&sslmode=require",
    );
    expect(shown("postgres://db/relay")).toBe("postgres://db/relay");
    expect(shown("postgres://[bad")).toBe("(RESULTS_DATABASE_URL: not a valid URL)");
  });

  it("when a log line quotes its password, as written or decoded, then the logger masks both", () => {
    const url = "postgres://relay:p%40ss-w0rd-9@db/relay";
    expect(urlCredentials(url)).toEqual(["p%40ss-w0rd-9", "p@ss-w0rd-9"]);
    expect(urlCredentials("postgres://db/relay")).toEqual([]);
    expect(urlCredentials(undefined)).toEqual([]);
    const lines: string[] = [];
    const logger = createLogger({
      format: "json",
      secrets: urlCredentials(url),
      destination: { write: (line: string) => lines.push(line) },
    });
    logger.error({ detail: "login p@ss-w0rd-9 and p%40ss-w0rd-9" }, "failed");
    expect(lines.join("")).not.toMatch(/ss-w0rd-9/);
    expect(lines.join("")).toContain("[redacted]");
  });
});
