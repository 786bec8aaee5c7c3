import { describe, expect, it } from "vitest";
import { isJsonContentType } from "../../src/simulator/http-reply.js";
import { bearerToken, parseIdempotencyKey } from "../../src/simulator/invoice-request.js";
import { RequestLog, type Attempt } from "../../src/simulator/request-log.js";
import { evaluateRuleset } from "../../src/simulator/ruleset.js";

describe("request parts (pure)", () => {
  it.each([
    ["application/json", true],
    ["application/json; charset=utf-8", true],
    ['application/json; charset="UTF-8"', true],
    ["APPLICATION/JSON", true],
    ["application/json; charset=utf-16", false],
    ["application/problem+json", false],
    ["text/json", false],
    [undefined, false],
  ])("when Content-Type is %j, then JSON is %s", (value, expected) => {
    expect(isJsonContentType(value)).toBe(expected);
  });

  it.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["BEARER  abc ", "abc"],
    ["Bearer", undefined],
    ["Bearer a b", undefined],
    ["Token abc", undefined],
    [undefined, undefined],
  ])("when Authorization is %j, then the token is %j", (value, expected) => {
    expect(bearerToken(value)).toBe(expected);
  });

  it("when Idempotency-Key is parsed, then UUIDs (bare or quoted, any case) are keys and the rest is missing or invalid", () => {
    const uuid = "0B9E3A58-3C61-5F0E-8F1E-2D0A5B7C9E14";
    expect(parseIdempotencyKey(uuid)).toEqual({ ok: true, key: uuid.toLowerCase() });
    expect(parseIdempotencyKey(` "${uuid}" `)).toEqual({ ok: true, key: uuid.toLowerCase() });
    expect(parseIdempotencyKey(undefined)).toEqual({ ok: false, reason: "missing" });
    expect(parseIdempotencyKey("  ")).toEqual({ ok: false, reason: "missing" });
    expect(parseIdempotencyKey(`{${uuid}}`)).toEqual({ ok: false, reason: "invalid" });
  });

  it("when invoices go to different countries, then the ruleset picks the channel and splits the archive policy", () => {
    const doc = (country: string, policy: string) => ({
      schema_version: "2026-10-16" as const,
      external_id: "X",
      document_type: "invoice" as const,
      currency: "EUR",
      routing: { destination_country: country, archive_policy: policy },
    });
    expect(evaluateRuleset(doc("DE", "eu-10y"))).toEqual({
      decision: "route",
      route: "peppol:DE",
      channel: "peppol",
      destination_country: "DE",
      archive: { region: "eu", retention: "10y" },
    });
    expect(evaluateRuleset(doc("US", "us-east-7y"))).toMatchObject({
      route: "edi:US",
      archive: { region: "us-east" },
    });
    expect(evaluateRuleset(doc("BR", "sa-east-1-5y"))).toMatchObject({
      channel: "email",
      archive: { region: "sa-east-1", retention: "5y" },
    });
  });

  it("when the request log wraps around, then a key's attempts still come oldest first", () => {
    const log = new RequestLog(4);
    const entry = (i: number, key: string): Attempt => ({
      at: i,
      status: 201,
      outcome: "effect",
      lost: false,
      idempotencyKey: key,
      bodySha256: undefined,
      authorized: true,
      traceparent: undefined,
    });
    for (let i = 0; i < 7; i++) log.add(entry(i, i % 2 === 0 ? "a" : "b"));
    expect(log.forKey("a").map((e) => e.at)).toEqual([4, 6]);
    expect(log.forKey("b").map((e) => e.at)).toEqual([3, 5]);
    expect(log.dropped).toBe(3);
  });
});
