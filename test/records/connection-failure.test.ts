import pg from "pg";
import { describe, expect, it } from "vitest";
import { isConnectionFailure } from "../../src/records/pool.js";

const serverError = (code: string) => Object.assign(new pg.DatabaseError("refused", 0, "error"), { code });

describe("which PostgreSQL failures are waited out", () => {
  it("when the connection failed or the server is shutting down, starting or full, then it is a connection failure", () => {
    expect(
      isConnectionFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })),
    ).toBe(true);
    expect(isConnectionFailure(new Error("Connection terminated unexpectedly"))).toBe(true);
    for (const code of ["08006", "57P01", "57P03", "53300"])
      expect(isConnectionFailure(serverError(code))).toBe(true);
  });

  it("when the server refused the query or the login, then it is not: waiting would not cure it", () => {
    for (const code of ["42P01", "42703", "28P01", "3D000"])
      expect(isConnectionFailure(serverError(code))).toBe(false);
  });
});
