import { describe, expect, it } from "vitest";
import { problemsOf } from "./problems-of.js";
import { loadConfig } from "../../src/config/load.js";
import { describeTarget, hashTagOf, redisTarget } from "../../src/config/redis-target.js";
import { maskUrlCredentials } from "../../src/config/url-credentials.js";

/** The one problem of a bad REDIS_CLUSTER_NODES; fails the test if there is not exactly one. */
function clusterProblem(value: string): string {
  const problems = problemsOf({ REDIS_CLUSTER_NODES: value, QUEUE_PREFIX: "{relay}" });
  expect(problems, value).toHaveLength(1);
  expect(problems[0], value).toMatch(/^REDIS_CLUSTER_NODES /);
  return problems[0] ?? "";
}

describe("REDIS_CLUSTER_NODES", () => {
  it("when it is not set, then the target is the single Redis of REDIS_URL", () => {
    const config = loadConfig({ REDIS_URL: "redis://10.0.0.9:6380" });
    expect(config.redisClusterNodes).toBeUndefined();
    expect(redisTarget(config)).toEqual({ kind: "single", url: "redis://10.0.0.9:6380" });
  });

  it("when it lists host:port entries, then they are the seed nodes, without credentials or TLS, and REDIS_URL is not used", () => {
    const config = loadConfig({
      REDIS_URL: "redis://10.0.0.9:6380",
      REDIS_CLUSTER_NODES: " 10.0.0.1:6379, redis-b.internal:7001 ,[::1]:7002,",
    });
    expect(redisTarget(config)).toEqual({
      kind: "cluster",
      nodes: [
        { host: "10.0.0.1", port: 6379 },
        { host: "redis-b.internal", port: 7001 },
        { host: "::1", port: 7002 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
    });
    expect(describeTarget(redisTarget(config))).toBe("10.0.0.1:6379,redis-b.internal:7001,[::1]:7002");
  });

  it("when its entries are URLs that agree, then the user, password and TLS come from them, decoded, and no message shows the password", () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES:
        "rediss://relay:p%40ss%2Cw0rd@a.example:6379,rediss://relay:p%40ss%2Cw0rd@b.example:6379/0",
    });
    expect(config.redisClusterNodes).toEqual({
      nodes: [
        { host: "a.example", port: 6379 },
        { host: "b.example", port: 6379 },
      ],
      username: "relay",
      password: "p@ss,w0rd",
      tls: true,
    });
    const described = describeTarget(redisTarget(config));
    expect(described).toBe("a.example:6379,b.example:6379 (TLS)");
    expect(described).not.toContain("ss");
    expect(loadConfig({ REDIS_CLUSTER_NODES: "redis://:only-pw@10.0.0.1:6379" }).redisClusterNodes).toEqual({
      nodes: [{ host: "10.0.0.1", port: 6379 }],
      username: undefined,
      password: "only-pw",
      tls: false,
    });
  });

  it("when an entry is not host:port or a redis URL, then it is refused naming the setting, the entry and what to write", () => {
    for (const bad of ["10.0.0.1", "10.0.0.1:0", "10.0.0.1:65536", "host:port", "10.0.0.1:6379/0", "a b:1"])
      expect(clusterProblem(`${bad},10.0.0.2:6379`), bad).toContain(
        `entry "${bad}" is not host:port or a redis:// URL; write e.g. 10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379`,
      );
    expect(clusterProblem("http://10.0.0.1:6379")).toMatch(/is not a redis:\/\/ or rediss:\/\/ URL/);
    expect(clusterProblem("redis://10.0.0.1")).toMatch(/must name a host and a port/);
    expect(clusterProblem("redis://10.0.0.1:6379/2")).toMatch(
      /names database 2: a Redis Cluster has only database 0/,
    );
    expect(clusterProblem("redis://10.0.0.1:6379?tls=true")).toMatch(/query or fragment/);
    expect(clusterProblem(" , ,")).toMatch(/must list the cluster's nodes, comma-separated/);
  });

  it("when the entries mix host:port and URLs, or the URLs disagree on scheme, user or password, then it is refused saying to write them alike", () => {
    expect(clusterProblem("redis://:pw@10.0.0.1:6379,10.0.0.2:6379")).toMatch(
      /mixes host:port entries and redis:\/\/ URLs; write every node the same way/,
    );
    for (const bad of [
      "redis://10.0.0.1:6379,rediss://10.0.0.2:6379",
      "redis://:one@10.0.0.1:6379,redis://:two@10.0.0.2:6379",
      "redis://a:pw@10.0.0.1:6379,redis://b:pw@10.0.0.2:6379",
    ])
      expect(clusterProblem(bad), bad).toMatch(
        /entries disagree on the scheme \(redis:\/\/ or rediss:\/\/\), user or password/,
      );
  });

  it("when a refused value holds a password, then neither the problem nor the quoted value shows it", () => {
    const secret = "Sup3rS3cret";
    for (const value of [
      `redis://:${secret}@10.0.0.1:6379/2`,
      `redis://:${secret}@10.0.0.1:6379,redis://:other-${secret}@10.0.0.2:6379`,
      `http://relay:${secret}@10.0.0.1:6379`,
      `relay:${secret}@10.0.0.1:6379`,
    ]) {
      const problem = clusterProblem(value);
      expect(problem, value).not.toContain(secret);
      expect(problem, value).toContain("***");
    }
    const urlProblems = problemsOf({ REDIS_URL: `http://:${secret}@10.0.0.1:6379` });
    expect(urlProblems).toEqual([
      expect.stringMatching(/^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/),
    ]);
    expect(urlProblems[0]).not.toContain(secret);
  });

  it("when a password holds a character a URL ends its userinfo at (/ ? # or a bad %), then REDIS_URL is refused naming the setting and how to encode it, and no message shows the password", () => {
    const secret = "Sup3r/S3cr?t#x";
    for (const value of [
      "redis://:Sup3r/S3cret@10.0.0.1:6379/0",
      "redis://relay:Sup3r?S3cret@10.0.0.1:6379",
      "redis://:Sup3r#S3cret@10.0.0.1:6379",
      "redis://:Sup3r%zzS3cret@10.0.0.1:6379",
    ]) {
      const problems = problemsOf({ REDIS_URL: value });
      expect(problems, value).toEqual([
        expect.stringMatching(/^REDIS_URL is not a valid URL: .*percent-encode/),
      ]);
      expect(problems[0], value).not.toMatch(/Sup3r|S3cret/);
    }
    for (const value of [`http://:${secret}@10.0.0.1:6379`, `postgres://u:${secret}@db:5432/x`])
      for (const problem of [
        ...problemsOf({ REDIS_URL: value }),
        ...problemsOf({ RESULTS_DATABASE_URL: value }),
      ])
        expect(problem, value).not.toMatch(/Sup3r|S3cr/);
  });

  it("when text holds user:password@ with or without a scheme, then the password is masked and the rest kept", () => {
    expect(maskUrlCredentials("rediss://relay:pw@a:6379,rediss://relay:pw@b:6379")).toBe(
      "rediss://relay:***@a:6379,rediss://relay:***@b:6379",
    );
    expect(maskUrlCredentials("relay:pw@a:6379")).toBe("relay:***@a:6379");
    expect(maskUrlCredentials("a:6379,b:6379")).toBe("a:6379,b:6379");
  });
});

describe("QUEUE_PREFIX", () => {
  it("when it holds one non-empty hash tag among the allowed characters, then it is taken and its tag is what is in the braces", () => {
    for (const [prefix, tag] of [
      ["{invoice-relay}", "invoice-relay"],
      ["acme-{relay}", "relay"],
      ["{a}.b_c-1", "a"],
      ["x{relay.eu_1}y", "relay.eu_1"],
    ] as const) {
      expect(loadConfig({ QUEUE_PREFIX: prefix }).queuePrefix).toBe(prefix);
      expect(hashTagOf(prefix), prefix).toBe(tag);
    }
    expect(hashTagOf("invoice-relay")).toBeUndefined();
    expect(loadConfig({ QUEUE_PREFIX: `{${"a".repeat(62)}}` }).queuePrefix).toHaveLength(64);
  });

  it("when braces do not form exactly one non-empty tag, then it is refused saying how to write one", () => {
    for (const bad of ["{}", "{relay", "relay}", "}relay{", "{a}{b}", "{{a}}", "a{b{c}}"])
      expect(problemsOf({ QUEUE_PREFIX: bad }), bad).toEqual([
        expect.stringMatching(
          /^QUEUE_PREFIX may hold one hash tag only: one '\{', .*\(e\.g\. \{invoice-relay\} or acme-\{relay\}\)/,
        ),
      ]);
  });

  it("when it has other characters or is too long, then the old rules still refuse it, naming the setting", () => {
    for (const bad of ["invoice relay", "relay:eu", "relay*", "{re lay}", "é"])
      expect(problemsOf({ QUEUE_PREFIX: bad }), bad).toEqual([
        expect.stringMatching(/^QUEUE_PREFIX must be letters, digits, '_', '\.' or '-'/),
      ]);
    expect(problemsOf({ QUEUE_PREFIX: "a".repeat(65) })).toEqual([
      expect.stringMatching(/^QUEUE_PREFIX must be at most 64 characters/),
    ]);
  });
});
