import { RelayError } from "../../errors/relay-error.js";

/**
 * Redis may evict keys (its maxmemory-policy is not noeviction), so a command that writes refuses to
 * start: an evicted key loses queued invoices or batches, or lets a changed invoice be sent as a second
 * effect (docs/configuration.md, ALLOW_EVICTING_REDIS).
 */
export class EvictingRedisError extends RelayError {
  readonly code = "REDIS_MAY_EVICT";

  /** `where`: empty for one server, else which masters of a cluster (" on master 10.0.0.1:6379, …"). */
  constructor(
    readonly policy: string,
    readonly where = "",
  ) {
    super(
      `Redis maxmemory-policy is ${policy}${where}: when Redis is short of memory it may delete invoice-relay's keys, ` +
        "losing queued invoices and batches, or letting a changed invoice be sent a second time. " +
        `Set it to noeviction${where === "" ? "" : " on every master"}: run CONFIG SET maxmemory-policy noeviction and put maxmemory-policy noeviction ` +
        "in redis.conf so it survives a restart (a managed Redis: its parameter group or settings page). " +
        "To run anyway, set ALLOW_EVICTING_REDIS=true (unsafe; see docs/configuration.md). Nothing was claimed or written.",
    );
  }
}
