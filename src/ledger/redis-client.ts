import type { Cluster, Redis } from "ioredis";

/**
 * A connection to the deployment's Redis: one server (`REDIS_URL`) or a Redis Cluster
 * (`REDIS_CLUSTER_NODES`). With a hash-tagged QUEUE_PREFIX every key of a deployment lives in one slot,
 * so every script and MULTI works the same on both (see docs/redis-cluster.md).
 */
export type RedisClient = Redis | Cluster;

export function isCluster(client: RedisClient): client is Cluster {
  return "isCluster" in client && client.isCluster;
}

/**
 * Every key matching `pattern`, in pages of about `count`: SCAN on one server, SCAN on each master of a
 * cluster (SCAN is per node there). A key may come twice (SCAN's own guarantee); callers dedupe.
 */
export async function* scanKeys(
  client: RedisClient,
  pattern: string,
  count = 1000,
): AsyncGenerator<string[]> {
  const nodes = isCluster(client) ? client.nodes("master") : [client];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", count);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== "0");
  }
}

/** Commands sent and not answered yet (a Redis that froze with its connections open answers none). */
export function unansweredCommands(client: RedisClient): number {
  const queued = (node: object): number => {
    const queue: unknown = Reflect.get(node, "commandQueue");
    const length: unknown = queue === undefined || queue === null ? 0 : Reflect.get(queue, "length");
    return typeof length === "number" ? length : 0;
  };
  return isCluster(client) ? client.nodes().reduce((n, node) => n + queued(node), 0) : queued(client);
}
