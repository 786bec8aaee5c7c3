import type { Config } from "../config/load.js";
import type { HttpAddr } from "../config/http-addr.js";
import { redisTarget } from "../config/redis-target.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";
import { createRedis } from "../queue/connection.js";
import { startHealthServer } from "./health-server.js";
import { checkReadiness } from "./readiness.js";

/** How long /readyz waits for Redis: well inside a probe's usual timeout (docker-compose.yml: 3 s). */
export const READINESS_TIMEOUT_MS = 1000;

export interface Probes {
  /** Where the server listens (e.g. http://127.0.0.1:9464); undefined when HTTP_ADDR=off. */
  readonly url: string | undefined;
  /** Closes the server, then its Redis connection. */
  close(): Promise<void>;
}

/**
 * The health probes of a long-running command at `addr` (nothing when undefined: HTTP_ADDR=off), with a
 * Redis connection of their own. `stopping` is the command's shutdown signal: /readyz answers 503 from
 * the first SIGTERM on, while requests in flight finish.
 */
export async function startProbes(
  config: Config,
  addr: HttpAddr | undefined,
  stopping: AbortSignal,
  logger: Logger,
): Promise<Probes> {
  if (addr === undefined) return { url: undefined, close: () => Promise.resolve() };
  // Opened once the server listens: a port in use then leaves no connection behind to close.
  let redis: RedisClient | undefined;
  const connection = (): RedisClient => {
    if (redis !== undefined) return redis;
    redis = createRedis(redisTarget(config), "producer", "invoice-relay-probes");
    // An outage is what /readyz reports; ioredis need not print it as well.
    redis.on("error", () => undefined);
    return redis;
  };
  const server = await startHealthServer({
    addr,
    readiness: () =>
      checkReadiness({
        redis: connection(),
        prefix: config.queuePrefix,
        stopping,
        timeoutMs: READINESS_TIMEOUT_MS,
      }),
  });
  connection();
  logger.info({ url: server.url }, `health probes listening on ${server.url} (/healthz, /readyz)`);
  return {
    url: server.url,
    close: async () => {
      await server.close();
      redis?.disconnect();
    },
  };
}
