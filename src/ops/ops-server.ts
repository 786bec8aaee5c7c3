import type { Config } from "../config/load.js";
import type { HttpAddr } from "../config/http-addr.js";
import { redisTarget } from "../config/redis-target.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";
import { createRedis, endConnection } from "../queue/connection.js";
import { healthRoutes } from "./health-routes.js";
import { describeHosts, servedHosts, type HostPolicy } from "./host-policy.js";
import { startHttpServer, type Routes } from "./http-server.js";
import { checkReadiness } from "./readiness.js";

/** How long /readyz waits for Redis: well inside a probe's usual timeout (docker-compose.yml: 3 s). */
export const READINESS_TIMEOUT_MS = 1000;

/**
 * Answered whatever the Host when HTTP_ADDR reaches beyond loopback: a kubelet or Prometheus names the
 * pod's IP or a service, and whoever reaches such an address can send any Host anyway. On loopback they
 * are checked like the console (docs/operations.md, "Health probes").
 */
export const PROBE_PATHS = ["/healthz", "/readyz", "/metrics"] as const;

export interface OpsServer {
  /** Where the server listens (e.g. http://127.0.0.1:9464); undefined when HTTP_ADDR=off. */
  readonly url: string | undefined;
  /** Closes the server, then its Redis connection. */
  close(): Promise<void>;
}

/** What the routes of the ops server share: the process's settings and a Redis connection of the server's own. */
export interface OpsContext {
  readonly config: Config;
  /** Opened on first use; an outage is what /readyz reports, so its errors are not logged. */
  readonly redis: () => RedisClient;
  /** Aborted at the process's first SIGTERM/SIGINT. */
  readonly stopping: AbortSignal;
  readonly logger: Logger;
  /** The host names the server is served as: a form's Origin must be one of them. */
  readonly hosts: HostPolicy;
}

/** Routes that need the ops server's context (metrics, the console). */
export type OpsRoutes = (ctx: OpsContext) => Routes;

/**
 * The HTTP server of a long-running command at `addr` (nothing when undefined: HTTP_ADDR=off): the health
 * probes and whatever `routes` add, with a Redis connection of its own. `stopping` is the command's
 * shutdown signal: /readyz answers 503 from the first SIGTERM on, while requests in flight finish.
 */
export async function startOpsServer(
  config: Config,
  addr: HttpAddr | undefined,
  stopping: AbortSignal,
  logger: Logger,
  routes: readonly OpsRoutes[] = [],
  /** For a process that scans the drop folder: "ok", or why it cannot be used (a check of /readyz). */
  dropFolder?: () => string,
): Promise<OpsServer> {
  if (addr === undefined) return { url: undefined, close: () => Promise.resolve() };
  // Opened on first use (a route may build its ports at registration): closed here when the server
  // cannot listen (a port in use), so no connection is left behind.
  let redis: RedisClient | undefined;
  const connection = (): RedisClient => {
    if (redis !== undefined) return redis;
    redis = createRedis(redisTarget(config), "producer", "invoice-relay-http");
    redis.on("error", () => undefined);
    return redis;
  };
  const hosts = servedHosts({ addr, consoleUrl: config.consoleUrl, allowed: config.consoleAllowedHosts });
  const ctx: OpsContext = { config, redis: connection, stopping, logger, hosts };
  const server = await startHttpServer({
    addr,
    hosts: { policy: hosts, open: hosts.beyondLoopback ? PROBE_PATHS : [], logger },
    routes: [
      healthRoutes(() =>
        checkReadiness({
          redis: connection(),
          prefix: config.queuePrefix,
          stopping,
          timeoutMs: READINESS_TIMEOUT_MS,
          dropFolder,
        }),
      ),
      ...routes.map((make) => make(ctx)),
    ],
  }).catch((error: unknown) => {
    if (redis !== undefined) endConnection(redis);
    throw error;
  });
  connection();
  const served = describeHosts(hosts, Number(new URL(server.url).port));
  logger.info(
    { url: server.url, hosts: served },
    `HTTP server listening on ${server.url} (the console at /, /metrics, /healthz, /readyz), ` +
      `answering to ${served.join(", ")}${hosts.beyondLoopback ? " (the probes and /metrics to any name)" : ""}`,
  );
  return {
    url: server.url,
    close: async () => {
      await server.close();
      if (redis !== undefined) endConnection(redis);
    },
  };
}
