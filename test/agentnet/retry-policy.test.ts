import { describe, expect, it } from "vitest";
import { judgeConnectionError, judgeStatus } from "../../src/agentnet/retry-policy.js";

function withCode(code: string, message = `connect ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

describe("judgeStatus", () => {
  it.each([200, 201, 204])("when the status is %i, then the answer is accepted", (status) => {
    expect(judgeStatus(status)).toEqual({ action: "accept" });
  });

  it.each([
    [429, false],
    [503, false],
    [500, true],
    [502, true],
    [504, true],
  ])(
    "when the status is %i, then it is retried (a key may have been issued: %s)",
    (status, mayHaveIssuedKey) => {
      expect(judgeStatus(status)).toMatchObject({ action: "retry", mayHaveIssuedKey });
    },
  );

  it.each([301, 302, 400, 401, 403, 404, 408, 409, 422])(
    "when the status is %i, then it is final",
    (status) => {
      expect(judgeStatus(status)).toMatchObject({ action: "fail", reason: `HTTP ${status}` });
    },
  );
});

describe("judgeConnectionError", () => {
  it.each(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"])(
    "when the error is %s, then it is retried and no key can have been issued",
    (code) => {
      expect(judgeConnectionError(withCode(code))).toMatchObject({
        action: "retry",
        mayHaveIssuedKey: false,
      });
    },
  );

  it.each(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])(
    "when the error is %s, then it is retried and a key may have been issued",
    (code) => {
      expect(judgeConnectionError(withCode(code))).toMatchObject({ action: "retry", mayHaveIssuedKey: true });
    },
  );

  it("when the overall deadline fired (TimeoutError), then it is retried as a lost answer", () => {
    const error = Object.assign(new Error("The operation was aborted due to timeout"), {
      name: "TimeoutError",
    });
    expect(judgeConnectionError(error)).toMatchObject({ action: "retry", mayHaveIssuedKey: true });
  });

  it("when the code sits on the cause or inside an AggregateError, then it is still found", () => {
    const wrapped = new Error("fetch failed", { cause: withCode("ECONNRESET") });
    const aggregate = new AggregateError([withCode("ECONNREFUSED")], "all addresses failed");
    expect(judgeConnectionError(wrapped)).toMatchObject({ action: "retry", mayHaveIssuedKey: true });
    expect(judgeConnectionError(aggregate)).toMatchObject({ action: "retry", mayHaveIssuedKey: false });
  });

  it.each(["ENOTFOUND", "CERT_HAS_EXPIRED", "ERR_TLS_CERT_ALTNAME_INVALID"])(
    "when the error is %s, then it is final: retrying cannot fix it",
    (code) => {
      expect(judgeConnectionError(withCode(code))).toMatchObject({ action: "fail" });
    },
  );

  it("when the error has no code at all, then it is final and its message is the reason", () => {
    expect(judgeConnectionError(new Error("bug"))).toEqual({
      action: "fail",
      reason: "bug",
      mayHaveIssuedKey: false,
    });
  });
});
