import { existsSync } from "node:fs";
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { RedisServer } from "../../src/dev/redis-server.js";
import { pingRedis } from "../support/ping-redis.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

interface Provided {
  readonly url: string;
  readonly source: string;
  stop(): Promise<void>;
}

/** A Docker engine is worth asking only if something points at one. */
function dockerMayAnswer(): boolean {
  return process.env["DOCKER_HOST"] !== undefined || existsSync("/var/run/docker.sock");
}

async function fromTestcontainers(): Promise<Provided | undefined> {
  if (!dockerMayAnswer()) return undefined;
  try {
    const { RedisContainer } = await import("@testcontainers/redis");
    const container = await new RedisContainer("redis:7-alpine").start();
    return {
      url: container.getConnectionUrl(),
      source: "testcontainers",
      stop: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined; // no engine answered: fall through to a private redis-server
  }
}

/**
 * Redis for the whole test run, in the order docs/development.md gives ("Tests"): REDIS_URL; a testcontainers
 * Redis when a Docker engine answers; else a private redis-server on a free port in a temp folder. None:
 * fail loudly.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let provided: Provided | undefined;
  const fromEnv = process.env["REDIS_URL"];
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!(await pingRedis(fromEnv)))
      throw new Error(`REDIS_URL=${fromEnv} does not answer PING; start that Redis or unset REDIS_URL.`);
    provided = { url: fromEnv, source: "REDIS_URL", stop: () => Promise.resolve() };
  }
  provided ??= await fromTestcontainers();
  if (provided === undefined) {
    const server = await RedisServer.start(); // throws with install instructions when redis-server is missing
    provided = {
      url: server.url,
      source: `private redis-server (${server.dir})`,
      stop: () => server.dispose(),
    };
  }
  process.stderr.write(`[tests] Redis: ${provided.source} at ${provided.url}\n`);
  project.provide("redisUrl", provided.url);
  return () => provided.stop();
}
