import { RelayError } from "../../errors/relay-error.js";
import { EXAMPLE_CLUSTER_NODES } from "../../config/redis-target.js";

/**
 * REDIS_URL names a node of a Redis Cluster. A client for one server gets MOVED for every key whose slot
 * lives on another node, so every command refuses at start, readers too, and says to list the cluster's
 * nodes in REDIS_CLUSTER_NODES instead (docs/redis-cluster.md).
 */
export class ClusterNodeUrlError extends RelayError {
  readonly code = "REDIS_URL_IS_CLUSTER_NODE";

  constructor(readonly redisUrl: string) {
    super(
      `REDIS_URL (${redisUrl}) points at a node of a Redis Cluster (cluster_enabled:1), which REDIS_URL cannot ` +
        "use: a client of one server is sent elsewhere (MOVED) for most keys. List the cluster's nodes in " +
        `REDIS_CLUSTER_NODES instead (e.g. REDIS_CLUSTER_NODES=${EXAMPLE_CLUSTER_NODES}; REDIS_URL is then ` +
        "not used), and give QUEUE_PREFIX a hash tag, e.g. QUEUE_PREFIX={invoice-relay} (see " +
        "docs/redis-cluster.md). Nothing was claimed or written.",
    );
  }
}
