import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { problemsOf } from "./problems-of.js";
import { loadConfig, requireSubmitConfig } from "../../src/config/load.js";
import { SETTINGS } from "../../src/config/settings.js";

const base = { INVOICE_API_URL: "https://invoices.example.com", INVOICE_API_KEY: "irs_live_a1b2c3d4e5f6" };

describe("configuration", () => {
  it("when docs/configuration.md lists the settings, then every one src/config/settings.ts reads is there, with its default", async () => {
    const page = await readFile(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const listed = new Map(
      [...page.matchAll(/^- `([A-Z][A-Z0-9_]+)` \(([^)]*)\)/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]),
    );
    expect(Object.values(SETTINGS).filter((s) => !listed.has(s.env))).toEqual([]);
    for (const setting of Object.values(SETTINGS))
      if ("default" in setting)
        expect(listed.get(setting.env), setting.env).toContain(`default \`${setting.default}\``);
  });

  it("when nothing is set, then every setting with a default has it", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      redisUrl: "redis://127.0.0.1:6379",
      dropDir: "./drop",
      queuePrefix: "invoice-relay",
      submitConcurrency: 512,
      maxAttempts: 10,
      backoffBaseMs: 1000,
      backoffCapMs: 300_000,
      correlationIdHeaders: ["x-request-id", "x-correlation-id", "request-id", "correlation-id"],
    });
    expect(config.invoiceApiKey).toBeUndefined();
  });

  it("when several variables are bad, then there is one message per bad variable naming it", () => {
    const problems = problemsOf({
      ...base,
      REDIS_URL: "localhost:6379",
      MAX_ATTEMPTS: "zero",
      SUBMIT_CONCURRENCY: "-3",
      LOG_LEVEL: "loud",
    });
    expect(problems).toHaveLength(4);
    expect(problems.map((p) => p.split(" ")[0]).sort()).toEqual([
      "LOG_LEVEL",
      "MAX_ATTEMPTS",
      "REDIS_URL",
      "SUBMIT_CONCURRENCY",
    ]);
    expect(problems.find((p) => p.startsWith("REDIS_URL"))).toMatch(/redis:\/\//);
  });

  it.each([
    ["abc", "SUBMIT_CONCURRENCY"],
    ["1.5", "SUBMIT_CONCURRENCY"],
    ["0x10", "SUBMIT_CONCURRENCY"],
    ["1e2", "SUBMIT_CONCURRENCY"],
    ["Infinity", "MAX_ATTEMPTS"],
    ["-3", "SUBMIT_CONCURRENCY"],
    ["0", "MAX_ATTEMPTS"],
    ["5000", "SUBMIT_CONCURRENCY"],
    ["50", "REQUEST_TIMEOUT_MS"],
  ])(
    "when a number setting is %j, then the message says in plain words which whole numbers it takes",
    (value, env) => {
      const problems = problemsOf({ ...base, [env]: value });
      expect(problems).toHaveLength(1);
      const range = {
        SUBMIT_CONCURRENCY: "1 to 1000",
        MAX_ATTEMPTS: "1 to 1000",
        REQUEST_TIMEOUT_MS: "100 to 600000",
      };
      expect(problems[0]).toBe(
        `${env} must be a whole number from ${range[env as keyof typeof range]} (got "${value}")`,
      );
    },
  );

  it("when a setting outside the numbers is wrong, then its message is a sentence, never the schema library's wording", () => {
    expect(problemsOf({ ...base, LOG_LEVEL: "loud", CORRELATION_ID_HEADERS: " , " })).toEqual([
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace or silent (got "loud")',
      'CORRELATION_ID_HEADERS must list at least 1 value(s) (got " , ")',
    ]);
  });

  it("when every number setting is given its bounds with padding, then each loads as that number", () => {
    const config = loadConfig({ SUBMIT_CONCURRENCY: " 1000 ", SUBMIT_RATE_PER_SEC: "0", SETTLE_MS: "007" });
    expect(config).toMatchObject({ submitConcurrency: 1000, submitRatePerSec: 0, settleMs: 7 });
  });

  it("when the API key is invalid, then the message never shows it", () => {
    const problems = problemsOf({ ...base, INVOICE_API_KEY: "short" });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^INVOICE_API_KEY/);
    expect(problems[0]).not.toContain("short");
  });

  it("when the API URL is http:// to a non-loopback host, then it is refused unless insecure HTTP is allowed", () => {
    expect(problemsOf({ ...base, INVOICE_API_URL: "http://invoices.example.com" })[0]).toMatch(/https/);
    expect(
      problemsOf({ ...base, INVOICE_API_URL: "http://invoices.example.com", ALLOW_INSECURE_HTTP: "true" }),
    ).toEqual([]);
    expect(problemsOf({ ...base, INVOICE_API_URL: "http://127.0.0.1:4010" })).toEqual([]);
    expect(problemsOf({ ...base, INVOICE_API_URL: "http://[::1]:4010" })).toEqual([]);
  });

  it("when the key is an agent-network credential, then it is refused for the invoice service", () => {
    for (const key of ["amn_dev_9fKq2LxY7pR4tZ1w", "xyz_agt_Hh28sKq0PlM3nB7v"]) {
      const problems = problemsOf({ ...base, INVOICE_API_KEY: key });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/INVOICE_API_KEY/);
      expect(problems[0]).not.toContain(key.slice(8));
    }
  });

  it("when flags are given, then they override the environment", () => {
    const config = loadConfig({ ...base, QUEUE_PREFIX: "from-env" }, { queuePrefix: "from-flag" });
    expect(config.queuePrefix).toBe("from-flag");
  });

  it("when a command needs to submit and the URL or key is missing, then it says which", () => {
    expect(() => requireSubmitConfig(loadConfig({}))).toThrow(
      /INVOICE_API_URL is not set[\s\S]*INVOICE_API_KEY is not set/,
    );
  });

  it("when DONE_MARKER_SUFFIX is a suffix such as .done, then it is taken; when it would name a drop file or lacks its dot, then it is refused naming the variable", () => {
    expect(loadConfig({ DONE_MARKER_SUFFIX: ".done" }).doneMarkerSuffix).toBe(".done");
    expect(loadConfig({}).doneMarkerSuffix).toBeUndefined();
    for (const bad of [".ok.csv", ".JSON", "done", ".", "./x"])
      expect(problemsOf({ DONE_MARKER_SUFFIX: bad }), bad).toEqual([
        expect.stringMatching(/^DONE_MARKER_SUFFIX must /) as unknown,
      ]);
  });
});
