import { describe, expect, it } from "vitest";
import { databaseHost } from "../../src/config/database-url.js";

describe("the host shown for RESULTS_DATABASE_URL while waiting for it", () => {
  it("when the URL holds credentials, a database and parameters, then only its host and port are shown", () => {
    expect(databaseHost("postgres://relay:s3cret@db.example:5432/relay?password=other&sslmode=require")).toBe(
      "db.example:5432",
    );
    expect(databaseHost("postgresql://db.example/relay")).toBe("db.example");
  });

  it("when the URL has no host or does not parse, then that is said instead", () => {
    expect(databaseHost("postgres:///relay?host=/var/run/postgresql")).toBe(
      "(no host in RESULTS_DATABASE_URL)",
    );
    expect(databaseHost("postgres://[bad")).toBe("(unparseable RESULTS_DATABASE_URL)");
  });
});
