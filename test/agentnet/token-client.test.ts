import { afterEach, describe, expect, it } from "vitest";
import { AgentnetRefusedError } from "../../src/agentnet/errors/agentnet-refused-error.js";
import { AgentnetResponseInvalidError } from "../../src/agentnet/errors/agentnet-response-invalid-error.js";
import { AgentnetUnavailableError } from "../../src/agentnet/errors/agentnet-unavailable-error.js";
import { InvalidTokenRequestError } from "../../src/agentnet/errors/invalid-token-request-error.js";
import { requestDeveloperKey, type TokenClientOptions } from "../../src/agentnet/token-client.js";
import { silentLogger } from "../../src/log/logger.js";
import {
  closedPort,
  DEV_KEY,
  grant,
  hang,
  json,
  loseResponse,
  startTokenServer,
  type Reply,
  type TokenServer,
} from "./support/token-server.js";

const input = { developerName: "Acme relay", email: "ops@example.com" };
let server: TokenServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Starts a scripted server and a client whose backoff sleeps are recorded, not waited. */
async function scripted(replies: readonly Reply[], extra: Partial<TokenClientOptions> = {}) {
  server = await startTokenServer(replies);
  const delays: number[] = [];
  const options: TokenClientOptions = {
    apiUrl: new URL(server.url),
    logger: silentLogger(),
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    retry: { maxAttempts: 4, baseMs: 100, capMs: 1_000, retryAfterCapMs: 5_000 },
    ...extra,
  };
  return { server, delays, options };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

describe("requestDeveloperKey", () => {
  it("when the service grants a key, then the key, id, prefix and note come back and exactly the two fields were sent without Authorization", async () => {
    const { server, options } = await scripted([grant()]);
    const result = await requestDeveloperKey(input, options);
    expect(result.grant).toEqual({
      developerId: "dev-acct-42",
      apiKey: DEV_KEY,
      keyPrefix: "amn_dev_",
      keyPrefixFromService: true,
      note: "Store this key securely. It is displayed only once.",
    });
    expect(result).toMatchObject({ attempts: 1, otherKeyMayExist: false });
    expect(server.requests).toHaveLength(1);
    const [sent] = server.requests;
    expect(sent?.method).toBe("POST");
    expect(sent?.url).toBe("/api/v1/auth/token");
    expect(sent?.headers["content-type"]).toBe("application/json");
    expect(sent?.headers.authorization).toBeUndefined();
    expect(JSON.parse(sent?.body ?? "")).toEqual({ developer_name: "Acme relay", email: "ops@example.com" });
  });

  it("when the base URL has a path prefix, then the endpoint is under it", async () => {
    const { server, options } = await scripted([grant()]);
    await requestDeveloperKey(input, { ...options, apiUrl: new URL(`${server.url}/agentnet/`) });
    expect(server.requests[0]?.url).toBe("/agentnet/api/v1/auth/token");
  });

  it("when the service answers 503 twice, then the third attempt gets the key after two growing backoff waits", async () => {
    const { server, delays, options } = await scripted([json(503, {}), json(503, {}), grant()]);
    const result = await requestDeveloperKey(input, options);
    expect(server.requests).toHaveLength(3);
    expect(result).toMatchObject({ attempts: 3, otherKeyMayExist: false });
    // Full jitter with random() = 0.5: half of base·2^(retry-1).
    expect(delays).toEqual([50, 100]);
  });

  it("when the service answers 429 with Retry-After, then the wait honours it, capped", async () => {
    const { delays, options } = await scripted([
      json(429, {}, { "retry-after": "2" }),
      json(429, {}, { "retry-after": "3600" }),
      grant(),
    ]);
    await requestDeveloperKey(input, options);
    expect(delays).toEqual([2_000, 5_000]);
  });

  it("when the answer is lost after the request arrived, then it is retried and the result says another key may exist", async () => {
    const { server, options } = await scripted([loseResponse, grant()]);
    const result = await requestDeveloperKey(input, options);
    expect(server.requests).toHaveLength(2);
    expect(result).toMatchObject({ attempts: 2, otherKeyMayExist: true });
    expect(result.grant.apiKey).toBe(DEV_KEY);
  });

  it("when the service answers 500 every time, then it gives up after maxAttempts with AGENTNET_UNAVAILABLE", async () => {
    const { server, options } = await scripted([json(500, { error: "boom" })]);
    const error = await rejection(requestDeveloperKey(input, options));
    expect(error).toBeInstanceOf(AgentnetUnavailableError);
    expect(error).toMatchObject({ code: "AGENTNET_UNAVAILABLE", attempts: 4, mayHaveIssuedKey: true });
    expect(server.requests).toHaveLength(4);
  });

  it("when nothing listens on the port, then connection refusals are retried and no key can have been issued", async () => {
    const port = await closedPort();
    const delays: number[] = [];
    const error = await rejection(
      requestDeveloperKey(input, {
        apiUrl: new URL(`http://127.0.0.1:${port}`),
        logger: silentLogger(),
        retry: { maxAttempts: 3, baseMs: 10, capMs: 10, retryAfterCapMs: 10 },
        sleep: (ms) => {
          delays.push(ms);
          return Promise.resolve();
        },
      }),
    );
    expect(error).toMatchObject({ code: "AGENTNET_UNAVAILABLE", attempts: 3, mayHaveIssuedKey: false });
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect(delays).toHaveLength(2);
  });

  it("when the service never answers, then the request times out, is retried, and may have issued a key", async () => {
    const { server, options } = await scripted([hang], {
      timeoutMs: 150,
      retry: { maxAttempts: 2, baseMs: 1, capMs: 1, retryAfterCapMs: 1 },
    });
    const error = await rejection(requestDeveloperKey(input, options));
    expect(error).toMatchObject({ code: "AGENTNET_UNAVAILABLE", attempts: 2, mayHaveIssuedKey: true });
    // a busy machine may read the second request only after the client gave up on it
    await expect.poll(() => server.requests.length).toBe(2);
  });

  it("when the service answers 400, then it is refused at once with the service's detail, not retried", async () => {
    const { server, options } = await scripted([json(400, { error: "email already registered" })]);
    const error = await rejection(requestDeveloperKey(input, options));
    expect(error).toBeInstanceOf(AgentnetRefusedError);
    expect(error).toMatchObject({ code: "AGENTNET_REQUEST_REFUSED", status: 400 });
    expect((error as Error).message).toContain("email already registered");
    expect(server.requests).toHaveLength(1);
  });

  it("when a refusal quotes a key back, then the key is masked in the error", async () => {
    const { options } = await scripted([json(409, { error: `exists: ${DEV_KEY}` })]);
    const error = await rejection(requestDeveloperKey(input, options));
    expect((error as Error).message).toContain("amn_dev_[redacted]");
    expect((error as Error).message).not.toContain(DEV_KEY);
  });

  it("when the service redirects, then the redirect is not followed and the user is told to fix the URL", async () => {
    const { server, options } = await scripted([
      (res) => {
        res.writeHead(302, { location: "http://elsewhere.invalid/api/v1/auth/token" });
        res.end();
      },
    ]);
    const error = await rejection(requestDeveloperKey(input, options));
    expect(error).toMatchObject({ code: "AGENTNET_REQUEST_REFUSED", status: 302 });
    expect((error as Error).message).toContain("--api-url");
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ["the body is not JSON", (res: Parameters<Reply>[0]) => res.end("<html>ok</html>"), "not JSON"],
    ["api_key is missing", grant({ api_key: undefined }), "api_key"],
    ["developer_id is a number", grant({ developer_id: 42 }), "developer_id"],
    [
      "api_key is an invoice key",
      grant({ api_key: "sk_live_Zx8dev_Qq1w2e3r4t5y6u7i8o9p" }),
      'does not end in "dev_"',
    ],
    [
      "api_key is an agent token",
      grant({ api_key: "amn_agt_Zx8Qq1w2e3r4t5y6u7i8o9p" }),
      'does not end in "dev_"',
    ],
    ["the body is larger than 64 KiB", grant({ note: "x".repeat(70_000) }), "larger than"],
  ] as const)(
    "when %s, then AGENTNET_RESPONSE_INVALID, no retry, and no secret in the message",
    async (_, reply, hint) => {
      const { server, options } = await scripted([reply]);
      const error = await rejection(requestDeveloperKey(input, options));
      expect(error).toBeInstanceOf(AgentnetResponseInvalidError);
      expect((error as Error).message).toContain(hint);
      expect((error as Error).message).not.toMatch(/Qq1w2e3r4t5y|9fKq2LmX/);
      expect(server.requests).toHaveLength(1);
    },
  );

  it("when key_prefix would reveal the key, then the key's own label is shown instead", async () => {
    const { options } = await scripted([grant({ key_prefix: DEV_KEY })]);
    const result = await requestDeveloperKey(input, options);
    expect(result.grant).toMatchObject({
      keyPrefix: "amn_dev_",
      keyPrefixFromService: false,
      apiKey: DEV_KEY,
    });
  });

  it.each([
    [{ developerName: "  ", email: "ops@example.com" }, "--name"],
    [{ developerName: "Acme", email: "not-an-email" }, "--email"],
    [{ developerName: "Acme\u001b[31m", email: "ops@example.com" }, "control characters"],
  ])("when the input is %j, then nothing is sent and the problem is named", async (bad, hint) => {
    const { server, options } = await scripted([grant()]);
    const error = await rejection(requestDeveloperKey(bad, options));
    expect(error).toBeInstanceOf(InvalidTokenRequestError);
    expect((error as Error).message).toContain(hint);
    expect(server.requests).toHaveLength(0);
  });
});
