import { describe, expect, it } from "vitest";
import { redactSecret, redactSecretInHeaders } from "../../src/submit/redact-secret.js";

const KEY = "irs_live_0123456789abcdef";

describe("redactSecret", () => {
  it("when a service answer echoes the key, then every whole occurrence is replaced", () => {
    expect(redactSecret(`{"detail":"bad ${KEY}","again":"Bearer ${KEY}"}`, KEY)).toBe(
      '{"detail":"bad [redacted]","again":"Bearer [redacted]"}',
    );
  });

  it("when a bounded body is cut inside an echoed key, then the partial key at its end is replaced", () => {
    expect(redactSecret(`detail: ${KEY.slice(0, 12)}`, KEY)).toBe("detail: [redacted]");
    expect(redactSecret(`detail: ${KEY.slice(0, 4)}`, KEY)).toBe("detail: [redacted]");
  });

  it("when the text ends with at most three characters of the key, or holds none of it, then it is unchanged", () => {
    expect(redactSecret("detail: irs", KEY)).toBe("detail: irs");
    expect(redactSecret('{"title":"Unauthorized"}', KEY)).toBe('{"title":"Unauthorized"}');
    expect(redactSecret("", KEY)).toBe("");
  });

  it("when headers echo the key in single and repeated values, then each value is redacted", () => {
    const headers = { "x-request-id": `req-${KEY}`, "set-cookie": ["a=1", `k=${KEY}`], vary: undefined };
    expect(redactSecretInHeaders(headers, KEY)).toEqual({
      "x-request-id": "req-[redacted]",
      "set-cookie": ["a=1", "k=[redacted]"],
      vary: undefined,
    });
  });
});
