import { RelayError } from "../../errors/relay-error.js";

/**
 * REDIS_CLUSTER_NODES is set and QUEUE_PREFIX has no hash tag: the deployment's keys would spread over
 * the cluster's slots, and every script that touches several of them would fail with CROSSSLOT, part-way
 * through a run. Refused at start, before anything is claimed (docs/redis-cluster.md).
 */
export class UntaggedQueuePrefixError extends RelayError {
  readonly code = "QUEUE_PREFIX_WITHOUT_HASH_TAG";

  constructor(readonly queuePrefix: string) {
    super(
      `QUEUE_PREFIX (${queuePrefix}) has no hash tag, and REDIS_CLUSTER_NODES is set: on a Redis Cluster every ` +
        "key of a deployment must hash to one slot, because BullMQ's scripts and the ledger's scripts " +
        "each touch many keys at once, which a cluster refuses across slots (CROSSSLOT). Add a hash tag: put " +
        "the prefix, or a part of it, in braces, e.g. QUEUE_PREFIX={invoice-relay} (a new prefix starts " +
        "empty; see docs/redis-cluster.md). Nothing was claimed or written.",
    );
  }
}
