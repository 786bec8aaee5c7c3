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
