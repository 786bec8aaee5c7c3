import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";

/** The Redis the test run was given (see test/setup/redis-global.ts). */
export function testRedisUrl(): string {
  return inject("redisUrl");
}

/** A fresh prefix per test, instead of flushing a shared Redis. */
export function testPrefix(): string {
  return `test-${randomUUID()}`;
}

export function testRedis(): Redis {
  return new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
}
