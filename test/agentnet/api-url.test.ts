import { describe, expect, it } from "vitest";
import { agentnetEndpoint, parseAgentnetApiUrl } from "../../src/agentnet/api-url.js";
import { AgentnetApiUrlError } from "../../src/agentnet/errors/agentnet-api-url-error.js";
import { InsecureApiUrlError } from "../../src/agentnet/errors/insecure-api-url-error.js";

const strict = { allowInsecureHttp: false };

describe("parseAgentnetApiUrl", () => {
  it.each([
    "https://agents.example.com",
    "http://127.0.0.1:8080",
    "http://127.45.6.7",
    "http://localhost:3000",
    "http://[::1]:3000",
  ])("when the URL is %s, then it is accepted", (raw) => {
    expect(parseAgentnetApiUrl(raw, strict).href).toBe(new URL(raw).href);
  });

  it.each([
    "http://agents.example.com",
    "http://10.0.0.1",
    "http://128.0.0.1",
    "http://localhost.example.com",
  ])("when the URL is %s, then http to a host off this machine is refused", (raw) => {
    expect(() => parseAgentnetApiUrl(raw, strict)).toThrow(InsecureApiUrlError);
  });

  it("when --allow-insecure-http is given, then http to any host is accepted", () => {
    expect(parseAgentnetApiUrl("http://agents.example.com", { allowInsecureHttp: true }).protocol).toBe(
      "http:",
    );
  });

  it.each([
    [undefined, "is not set"],
    ["  ", "is not set"],
    ["agents.example.com", "not an absolute URL"],
    ["ftp://agents.example.com", "must be http(s)"],
    ["https://user:pw@agents.example.com", "user name or password"],
    ["https://agents.example.com/?x=1", "query or fragment"],
  ])("when the URL is %j, then it is refused with a message that says why", (raw, hint) => {
    expect(() => parseAgentnetApiUrl(raw, strict)).toThrow(AgentnetApiUrlError);
    expect(() => parseAgentnetApiUrl(raw, strict)).toThrow(hint);
  });
});

describe("agentnetEndpoint", () => {
  it.each([
    ["https://a.example.com", "https://a.example.com/api/v1/auth/token"],
    ["https://a.example.com/", "https://a.example.com/api/v1/auth/token"],
    ["https://a.example.com/net//", "https://a.example.com/net/api/v1/auth/token"],
  ])("when the base is %s, then the token endpoint is %s", (base, expected) => {
    expect(agentnetEndpoint(new URL(base), "auth/token").href).toBe(expected);
  });
});
