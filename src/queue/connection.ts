import { Redis, type RedisOptions } from "ioredis";

/**
 * Redis connections as BullMQ wants them: workers block and must ride out reconnects
 * (`maxRetriesPerRequest: null`); producers and CLI reads fail fast so a user is told at once that
 * Redis is unreachable.
 */
export type ConnectionRole = "worker" | "producer";

export function createRedis(url: string, role: ConnectionRole, name = "invoice-relay"): Redis {
  const options: RedisOptions = {
    connectionName: `${name}:${role}`,
    lazyConnect: false,
    // Reconnect quickly at first, then every 2 s at most: a restarted Redis is picked up within seconds.
    retryStrategy: (times) => Math.min(100 * times, 2000),
    ...(role === "worker"
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 2, enableOfflineQueue: true, connectTimeout: 5000 }),
  };
  return new Redis(url, options);
}

/** Waits until the connection is ready, or fails with a message naming the URL (without credentials). */
export async function ensureConnected(redis: Redis, url: string, timeoutMs = 5000): Promise<void> {
  if (redis.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(
          `Redis at ${safeUrl(url)} is unreachable (no answer within ${timeoutMs} ms); is it running? Check REDIS_URL.`,
        ),
      );
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off("ready", onReady);
    };
    redis.on("ready", onReady);
  });
}

/**
 * Whether `error` only says that Redis is out of reach for now (restarting, failing over, network): the
 * connection is not ready, or ioredis gave up on a command after its reconnect attempts. A long-running
 * loop can wait that out; any other error is real.
 */
export function isRedisUnavailable(redis: Redis, error: unknown): boolean {
  return redis.status !== "ready" || (error instanceof Error && error.name === "MaxRetriesPerRequestError");
}

/** A Redis URL without its password, for messages. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable REDIS_URL)";
  }
}
