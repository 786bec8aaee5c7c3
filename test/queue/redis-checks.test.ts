import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { checkRedis } from "../../src/queue/redis-checks.js";

// A private Redis: the test adds an ACL user and changes maxmemory-policy.
let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  server = await RedisServer.start();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  admin.disconnect();
  await server.dispose();
});

describe("checkRedis", () => {
  it("when INFO and CONFIG are refused (as some managed Redis do), then a writer is warned that the policy and cluster mode could not be read, not stopped", async () => {
    await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    await admin.acl("SETUSER", "limited", "on", ">limited-pw", "~*", "&*", "+@all", "-info", "-config");
    const limited = new Redis(server.url, {
      username: "limited",
      password: "limited-pw",
      maxRetriesPerRequest: 1,
    });
    try {
      await expect(limited.info("memory")).rejects.toThrow(/NOPERM/);
      const warnings = await checkRedis(limited, {
        access: "read-write",
        allowEvicting: false,
        safeUrl: server.url,
      });
      expect(warnings.join("\n")).toContain("could not read Redis maxmemory-policy");
      expect(warnings.join("\n")).toContain("could not tell whether Redis runs in cluster mode");
    } finally {
      limited.disconnect();
      await admin.config("SET", "maxmemory-policy", "noeviction");
    }
  });
});
