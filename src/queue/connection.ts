import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import { describeTarget, targetSetting, type RedisTarget } from "../config/redis-target.js";
import { isCluster, type RedisClient } from "../ledger/redis-client.js";

/**
 * Redis connections as BullMQ wants them: workers block and must ride out reconnects
 * (`maxRetriesPerRequest: null`); producers and CLI reads fail fast so a user is told at once that
 * Redis is unreachable.
 */
export type ConnectionRole = "worker" | "producer";

// Reconnect quickly at first, then every 2 s at most: a restarted Redis is picked up within seconds.
const reconnectDelay = (times: number): number => Math.min(100 * times, 2000);

/**
 * On a cluster a command to a node that is down is retried every `retryDelayOnFailover` up to
 * `maxRedirections` times. A worker's commands must outlast a failover (a replica takes over after
 * cluster-node-timeout, 15 s by default): 600 × 200 ms is two minutes. A producer keeps ioredis'
 * defaults (16 × 100 ms) and fails fast, as on one server.
 */
const WORKER_CLUSTER_RETRIES: Partial<ClusterOptions> = {
  maxRedirections: 600,
  retryDelayOnFailover: 200,
  retryDelayOnClusterDown: 200,
  retryDelayOnTryAgain: 200,
};

/** What a connection of `role` sets on each server it talks to. */
function roleOptions(role: ConnectionRole, name: string) {
  return {
    connectionName: `${name}:${role}`,
    ...(role === "worker"
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 2, connectTimeout: 5000 }),
  };
}

/**
 * A connection to the deployment's Redis: a URL gives one server, a cluster target a Redis Cluster
 * client (the same role options on every node it connects to).
 */
export function createRedis(target: RedisTarget, role: ConnectionRole, name?: string): RedisClient;
export function createRedis(target: string, role: ConnectionRole, name?: string): Redis;
export function createRedis(
  target: string | RedisTarget,
  role: ConnectionRole,
  name = "invoice-relay",
): RedisClient {
  const resolved: RedisTarget = typeof target === "string" ? { kind: "single", url: target } : target;
  if (resolved.kind === "single") {
    const options: RedisOptions = {
      ...roleOptions(role, name),
      lazyConnect: false,
      retryStrategy: reconnectDelay,
      ...(role === "producer" ? { enableOfflineQueue: true } : {}),
    };
    return new Redis(resolved.url, options);
  }
  const options: ClusterOptions = {
    lazyConnect: false,
    enableReadyCheck: true, // "ready" only once CLUSTER INFO says the cluster serves every slot
    enableOfflineQueue: true,
    clusterRetryStrategy: reconnectDelay,
    ...(role === "worker" ? WORKER_CLUSTER_RETRIES : {}),
    // With TLS, connect to the names given so that they match the nodes' certificates (managed
    // clusters hand out a configuration endpoint whose addresses are not in the certificate).
    ...(resolved.tls
      ? {
          dnsLookup: (address, lookedUp) => {
            lookedUp(null, address);
          },
        }
      : {}),
    redisOptions: {
      ...roleOptions(role, name),
      ...(resolved.username === undefined ? {} : { username: resolved.username }),
      ...(resolved.password === undefined ? {} : { password: resolved.password }),
      ...(resolved.tls ? { tls: {} } : {}),
    },
  };
  return new Cluster(
    resolved.nodes.map((n) => ({ host: n.host, port: n.port })),
    options,
  );
}

/**
 * Waits until the connection is ready (for a cluster: every slot served), or fails with a message
 * naming the setting to check and where it points, without credentials.
 */
export async function ensureConnected(
  redis: RedisClient,
  target: string | RedisTarget,
  timeoutMs = 5000,
): Promise<void> {
  if (redis.status === "ready") return;
  const resolved: RedisTarget = typeof target === "string" ? { kind: "single", url: target } : target;
  let lastError: string | undefined;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(unreachableMessage(resolved, timeoutMs, lastError)));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onError = (error: unknown) => {
      lastError = errorText(error);
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
    };
    redis.on("ready", onReady);
    redis.on("error", onError);
  });
}

function unreachableMessage(target: RedisTarget, timeoutMs: number, lastError: string | undefined): string {
  const setting = targetSetting(target);
  const why = lastError === undefined ? "" : ` (last error: ${lastError})`;
  if (target.kind === "single")
    return (
      `Redis at ${describeTarget(target)} is unreachable (no answer within ${timeoutMs} ms)${why}; ` +
      `is it running? Check ${setting}.`
    );
  return (
    `the Redis Cluster at ${describeTarget(target)} is not ready (no cluster serving every slot within ` +
    `${timeoutMs} ms)${why}; are the nodes running, do they form one cluster, and are they reachable ` +
    `from here? Check ${setting}.`
  );
}

/**
 * What an ioredis error says, for a message: a cluster client reports "Failed to refresh slots cache"
 * and keeps the error of the last node it asked, which is the useful part. Server and socket errors
 * name no credentials.
 */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lastNodeError: unknown = "lastNodeError" in error ? error.lastNodeError : undefined;
  return lastNodeError instanceof Error ? `${error.message} ${lastNodeError.message}` : error.message;
}

/**
 * Whether `error` only says that Redis is out of reach for now (restarting, failing over, network): the
 * connection is not ready, or ioredis gave up on a command after its reconnect attempts (one server) or
 * its redirections (a cluster whose node is down or failing over). A long-running loop can wait that
 * out; any other error is real.
 */
export function isRedisUnavailable(redis: RedisClient, error: unknown): boolean {
  if (redis.status !== "ready") return true;
  if (!(error instanceof Error)) return false;
  if (error.name === "MaxRetriesPerRequestError") return true;
  return isCluster(redis) && isClusterOutage(error);
}

/**
 * The errors a cluster client gives a command while a node is away. ioredis raises them as plain
 * errors without a type: the first word is Redis' own error code (CLUSTERDOWN, TRYAGAIN) or ioredis'
 * fixed wording for a command whose redirections ran out.
 */
function isClusterOutage(error: Error): boolean {
  const code = error.message.split(" ")[0];
  return (
    error.name === "ClusterAllFailedError" ||
    code === "CLUSTERDOWN" ||
    code === "TRYAGAIN" ||
    error.message.startsWith("Too many Cluster redirections")
  );
}

/** What endConnection needs of a connection: ioredis' own, or BullMQ's view of one. */
export interface Endable {
  readonly status: string;
  connect(): Promise<unknown>;
  disconnect(): void;
}

/**
 * Ends a connection now, whatever its state, failing the commands it still holds. ioredis'
 * `disconnect()` between two reconnect attempts only cancels the next attempt: the socket is already
 * gone, so no "close" follows, the client never reaches "end" and its queued commands wait for ever
 * (and whatever awaits them, a BullMQ worker's close among them). One more attempt, made while the
 * client is marked as closed by hand, ends it whichever way the attempt goes: refused, the close
 * handler ends the client and fails the queue; answered, it is disconnected at once.
 */
export function endConnection(redis: Endable): void {
  const betweenAttempts = redis.status === "reconnecting";
  redis.disconnect();
  if (!betweenAttempts) return;
  redis.connect().then(
    () => {
      redis.disconnect();
    },
    () => undefined,
  );
}
