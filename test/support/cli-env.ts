import { randomUUID } from "node:crypto";
import { testRedisUrl } from "./redis.js";

export interface CliEnvParts {
  /** The invoice service (INVOICE_API_URL) and its key (INVOICE_API_KEY). */
  readonly apiUrl?: string;
  readonly apiKey?: string;
  /** QUEUE_PREFIX as it is; else `<name>-<uuid>`, fresh for the test. */
  readonly queuePrefix?: string;
  readonly name?: string;
  readonly dropDir?: string;
}

/**
 * The environment a test runs the CLI with: the test run's Redis, a queue prefix of the test's own, the
 * service and drop folder when given, files picked up at once (SETTLE_MS=0) and warnings only in the
 * log; `more` adds settings or overrides these.
 */
export function cliEnv(parts: CliEnvParts, more: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: testRedisUrl(),
    ...(parts.apiUrl === undefined ? {} : { INVOICE_API_URL: parts.apiUrl }),
    ...(parts.apiKey === undefined ? {} : { INVOICE_API_KEY: parts.apiKey }),
    QUEUE_PREFIX: parts.queuePrefix ?? `${parts.name ?? "cli"}-${randomUUID()}`,
    ...(parts.dropDir === undefined ? {} : { DROP_DIR: parts.dropDir }),
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
    ...more,
  };
}
