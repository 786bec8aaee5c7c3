import type { Redis } from "ioredis";
import { EvictingRedisError } from "./errors/evicting-redis-error.js";
import { RedisClusterError } from "./errors/redis-cluster-error.js";

/**
 * What a command does with Redis. A writer refuses a Redis that may evict keys (see README.md,
 * Requirements); a reader (`status`, `results`) only warns, since what it shows is still the best there
 * is.
 */
export type RedisAccess = "read-write" | "read-only";

export interface RedisCheckOptions {
  readonly access: RedisAccess;
  /** ALLOW_EVICTING_REDIS: the operator accepts an evicting Redis; warn instead of refusing. */
  readonly allowEvicting: boolean;
  /** The Redis URL without its password, for messages. */
  readonly safeUrl: string;
}

/**
 * Checks the Redis a command is about to use, before it touches a key or the drop folder. Throws a
 * typed error when a command must not go on; returns what to warn the operator about.
 *
 * A Redis Cluster is refused for every command, readers too: until cluster support exists, the
 * scripts' multi-key calls fail there (CROSSSLOT, MOVED), reads included.
 *
 * Only `noeviction` is accepted. `allkeys-*` may delete any key: a job (its invoice is never sent), a
 * batch (its report is never written), a result record or the external-id index (a re-dropped or
 * changed invoice is then sent again, a second effect at the service). `volatile-*` is refused too:
 * BullMQ gives its job locks and rate-limit counters a TTL, so those keys can go early (a job still
 * being sent is taken by a second worker; the rate limit is exceeded), and any key of ours that gets a
 * TTL later would become evictable without this check noticing.
 */
export async function checkRedis(redis: Redis, options: RedisCheckOptions): Promise<string[]> {
  const warnings: string[] = [];
  const cluster = await readServerSetting(redis, "cluster", "cluster_enabled", "cluster-enabled");
  if (cluster === undefined) {
    warnings.push(
      "could not tell whether Redis runs in cluster mode (INFO and CONFIG GET refused); Redis Cluster is " +
        "not supported: if commands fail with MOVED or CROSSSLOT, point REDIS_URL at a standalone Redis",
    );
  } else if (cluster === "1" || cluster === "yes") {
    throw new RedisClusterError(options.safeUrl);
  }
  const policy = await readServerSetting(redis, "memory", "maxmemory_policy", "maxmemory-policy");
  if (policy === undefined) {
    warnings.push(
      "could not read Redis maxmemory-policy (INFO and CONFIG GET refused): make sure it is noeviction, " +
        "or an evicted key may lose queued invoices or let a changed invoice be sent twice",
    );
  } else if (policy !== "noeviction") {
    if (options.access === "read-only") {
      warnings.push(
        `Redis maxmemory-policy is ${policy}: Redis may have evicted jobs and results, so this may be ` +
          "incomplete; commands that write refuse to run until it is noeviction " +
          "(CONFIG SET maxmemory-policy noeviction)",
      );
    } else if (options.allowEvicting) {
      warnings.push(
        `Redis maxmemory-policy is ${policy} and ALLOW_EVICTING_REDIS=true: going ahead, but an evicted ` +
          "key can lose queued invoices or let a changed invoice be sent twice; set maxmemory-policy noeviction",
      );
    } else {
      throw new EvictingRedisError(policy);
    }
  }
  // A reader loses nothing to a restart; only a writer's work is at stake.
  if (options.access === "read-write" && (await persistenceOff(redis))) {
    warnings.push(
      "Redis persistence is off (no AOF, no RDB snapshots): a Redis restart loses queued work; enable appendonly yes",
    );
  }
  return warnings;
}

/**
 * A server setting from INFO (allowed by most managed Redis), else from CONFIG GET; undefined when both
 * are refused.
 */
async function readServerSetting(
  redis: Redis,
  section: string,
  infoField: string,
  configName: string,
): Promise<string | undefined> {
  const fromInfo = await infoSection(redis, section).then((info) => info?.get(infoField));
  if (fromInfo !== undefined && fromInfo !== "") return fromInfo;
  return redis.config("GET", configName).then(
    (reply) => (Array.isArray(reply) && typeof reply[1] === "string" ? reply[1] : undefined),
    () => undefined,
  );
}

async function persistenceOff(redis: Redis): Promise<boolean> {
  const aof = (await infoSection(redis, "persistence"))?.get("aof_enabled");
  const rdbSaves = await redis.config("GET", "save").then(
    (reply) => (Array.isArray(reply) ? String(reply[1] ?? "") : undefined),
    () => undefined,
  );
  // Unknown is not "off": only say so when Redis told us both.
  return aof === "0" && rdbSaves === "";
}

/** One INFO section as a map, or undefined when INFO is refused. */
async function infoSection(redis: Redis, section: string): Promise<Map<string, string> | undefined> {
  try {
    return parseInfo(await redis.info(section));
  } catch {
    return undefined;
  }
}

function parseInfo(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0) map.set(line.slice(0, at), line.slice(at + 1));
  }
  return map;
}
