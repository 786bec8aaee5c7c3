import { RelayError } from "../../errors/relay-error.js";

/**
 * REDIS_URL names a node of a Redis Cluster. The queue's and the results store's scripts touch several
 * keys that a cluster spreads over slots (CROSSSLOT) and nodes (MOVED), so every command refuses at
 * start, readers too, rather than fail half-way after claiming a file.
 */
export class RedisClusterError extends RelayError {
  readonly code = "REDIS_CLUSTER_UNSUPPORTED";

  constructor(readonly redisUrl: string) {
    super(
      `REDIS_URL (${redisUrl}) points at a node of a Redis Cluster (cluster_enabled:1), and Redis Cluster is ` +
        "not supported yet by this version of invoice-relay: its commands fail there with MOVED or CROSSSLOT. " +
        "Point REDIS_URL at a standalone Redis, or at the primary of a replicated one without cluster mode. " +
        "Nothing was claimed or written.",
    );
  }
}
