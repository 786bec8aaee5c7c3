import { randomUUID } from "node:crypto";
import { testRedisUrl } from "./redis.js";

export interface CliEnvParts {
  /** REDIS_URL: a Redis of the test's own (one it restarts, stops or sets up otherwise); else the test run's. */
  readonly redisUrl?: string;
  /** REDIS_CLUSTER_NODES of a Redis Cluster, in place of REDIS_URL. */
  readonly redisClusterNodes?: string;
  /** The invoice service (INVOICE_API_URL) and its key (INVOICE_API_KEY). */
  readonly apiUrl?: string;
  readonly apiKey?: string;
  /** QUEUE_PREFIX as it is; else `<name>-<uuid>`, fresh for the test. */
  readonly queuePrefix?: string;
  readonly name?: string;
  readonly dropDir?: string;
}

/**
 * The environment a test runs the CLI with: the test run's Redis (or the one given), a queue prefix of
 * the test's own, the service and drop folder when given, files picked up at once (SETTLE_MS=0) and
 * warnings only in the log; `more` adds settings or overrides these.
 */
export function cliEnv(parts: CliEnvParts, more: Record<string, string> = {}): Record<string, string> {
  return {
    ...(parts.redisClusterNodes === undefined
      ? { REDIS_URL: parts.redisUrl ?? testRedisUrl() }
      : { REDIS_CLUSTER_NODES: parts.redisClusterNodes }),
    ...(parts.apiUrl === undefined ? {} : { INVOICE_API_URL: parts.apiUrl }),
    ...(parts.apiKey === undefined ? {} : { INVOICE_API_KEY: parts.apiKey }),
    QUEUE_PREFIX: parts.queuePrefix ?? `${parts.name ?? "cli"}-${randomUUID()}`,
    ...(parts.dropDir === undefined ? {} : { DROP_DIR: parts.dropDir }),
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    ...more,
  };
}
