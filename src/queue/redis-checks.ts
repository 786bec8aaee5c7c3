import type { Redis } from "ioredis";
import { hashTagOf, nodeAddress, type RedisTarget } from "../config/redis-target.js";
import { isCluster, type RedisClient } from "../ledger/redis-client.js";
import { ClusterNodeUrlError } from "./errors/cluster-node-url-error.js";
import { EvictingRedisError } from "./errors/evicting-redis-error.js";
import { UntaggedQueuePrefixError } from "./errors/untagged-queue-prefix-error.js";

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
  /** REDIS_URL without its password, for messages (one server only). */
  readonly safeUrl: string;
}

/**
 * Checks, before connecting, that the deployment's keys can live where the settings point: on a Redis
 * Cluster QUEUE_PREFIX must carry a hash tag, so that every key of the deployment hashes to one slot.
 * BullMQ's scripts and the ledger's scripts each touch many keys at once, which a cluster refuses
 * across slots (CROSSSLOT); without the tag a run would fail part-way, after claiming files.
 */
export function checkKeyLayout(target: RedisTarget, queuePrefix: string): void {
  if (target.kind === "cluster" && hashTagOf(queuePrefix) === undefined)
    throw new UntaggedQueuePrefixError(queuePrefix);
}

/**
 * Checks the Redis a command is about to use, before it touches a key or the drop folder. Throws a
 * typed error when a command must not go on; returns what to warn the operator about.
 *
 * REDIS_URL pointing at a node of a Redis Cluster is refused for every command, readers too: a client of
 * one server is sent elsewhere (MOVED) for most keys; REDIS_CLUSTER_NODES is the setting for a cluster.
 * On a cluster every master is read, since each keeps its own settings.
 *
 * Only `noeviction` is accepted. `allkeys-*` may delete any key: a job (its invoice is never sent), a
 * batch (its report is never written), a result record or the external-id index (a re-dropped or
 * changed invoice is then sent again, a second effect at the service). `volatile-*` is refused too:
 * BullMQ gives its job locks and rate-limit counters a TTL, so those keys can go early (a job still
 * being sent is taken by a second worker; the rate limit is exceeded), and any key of ours that gets a
 * TTL later would become evictable without this check noticing.
 */
export async function checkRedis(redis: RedisClient, options: RedisCheckOptions): Promise<string[]> {
  if (isCluster(redis)) {
    const masters = redis.nodes("master");
    const readings = await Promise.all(
      masters.map(async (node) => ({
        node: nodeAddress({ host: node.options.host ?? "?", port: node.options.port ?? 0 }),
        ...(await readServer(node, options.access)),
      })),
    );
    return judge(readings, options);
  }
  const warnings: string[] = [];
  const cluster = await readServerSetting(redis, "cluster", "cluster_enabled", "cluster-enabled");
  if (cluster === undefined) {
    warnings.push(
      "could not tell whether Redis runs in cluster mode (INFO and CONFIG GET refused): if commands fail " +
        "with MOVED or CROSSSLOT, it is a Redis Cluster: list its nodes in REDIS_CLUSTER_NODES instead of " +
        "REDIS_URL, and give QUEUE_PREFIX a hash tag, e.g. {invoice-relay}",
    );
  } else if (cluster === "1" || cluster === "yes") {
    throw new ClusterNodeUrlError(options.safeUrl);
  }
  return [
    ...warnings,
    ...judge([{ node: undefined, ...(await readServer(redis, options.access)) }], options),
  ];
}

/** What one server says about itself; undefined where INFO and CONFIG GET are refused. */
interface ServerReading {
  /** Which master of a cluster (host:port); undefined for a single server. */
  readonly node: string | undefined;
  readonly policy: string | undefined;
  readonly persistenceOff: boolean;
}

async function readServer(redis: Redis, access: RedisAccess): Promise<Omit<ServerReading, "node">> {
  const policy = await readServerSetting(redis, "memory", "maxmemory_policy", "maxmemory-policy");
  // A reader loses nothing to a restart; only a writer's work is at stake.
  const persistenceOff = access === "read-write" && (await isPersistenceOff(redis));
  return { policy, persistenceOff };
}

/** The warnings for what the servers said, or the error of a command that must not start. */
function judge(readings: readonly ServerReading[], options: RedisCheckOptions): string[] {
  const warnings: string[] = [];
  const on = (of: readonly ServerReading[]) => {
    const nodes = of.flatMap((r) => (r.node === undefined ? [] : [r.node]));
    if (nodes.length === 0) return "";
    return ` on ${nodes.length === 1 ? "master" : "masters"} ${nodes.join(", ")}`;
  };
  const unknown = readings.filter((r) => r.policy === undefined);
  if (unknown.length > 0) {
    warnings.push(
      `could not read Redis maxmemory-policy${on(unknown)} (INFO and CONFIG GET refused): make sure it is ` +
        "noeviction, or an evicted key may lose queued invoices or let a changed invoice be sent twice",
    );
  }
  const evicting = readings.filter((r) => r.policy !== undefined && r.policy !== "noeviction");
  for (const policy of new Set(evicting.map((r) => r.policy ?? ""))) {
    const where = on(evicting.filter((r) => r.policy === policy));
    if (options.access === "read-only") {
      warnings.push(
        `Redis maxmemory-policy is ${policy}${where}: Redis may have evicted jobs and results, so this may be ` +
          "incomplete; commands that write refuse to run until it is noeviction " +
          "(CONFIG SET maxmemory-policy noeviction)",
      );
    } else if (options.allowEvicting) {
      warnings.push(
        `Redis maxmemory-policy is ${policy}${where} and ALLOW_EVICTING_REDIS=true: going ahead, but an evicted ` +
          "key can lose queued invoices or let a changed invoice be sent twice; set maxmemory-policy noeviction",
      );
    } else {
      throw new EvictingRedisError(policy, where);
    }
  }
  const unsaved = readings.filter((r) => r.persistenceOff);
  if (unsaved.length > 0) {
    warnings.push(
      `Redis persistence is off${on(unsaved)} (no AOF, no RDB snapshots): a Redis restart loses queued work; ` +
        "enable appendonly yes",
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

async function isPersistenceOff(redis: Redis): Promise<boolean> {
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
