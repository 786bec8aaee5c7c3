import type { Config } from "../config/load.js";
import type { HttpAddr } from "../config/http-addr.js";
import type { Logger } from "../log/logger.js";
import { startOpsServer, type OpsRoutes, type OpsServer } from "../ops/ops-server.js";
import { consoleOps } from "./console-ports.js";
import { metricsRoutes } from "../ops/metrics/metrics-routes.js";
import { createRelayMetrics, type RelayMetrics } from "../ops/metrics/relay-metrics.js";

/**
 * The HTTP server of `run`, `start`, `worker` and `console` on HTTP_ADDR (docs/operations.md): the
 * health probes, /metrics and the web console.
 */
export function serveOps(
  config: Config,
  addr: HttpAddr | undefined,
  stopping: AbortSignal,
  logger: Logger,
  /** The process's metrics (createRelayMetrics, made before its submission worker starts), at /metrics. */
  metrics: RelayMetrics = createRelayMetrics(),
  /** For a process that scans the drop folder: "ok", or why it cannot be used (a check of /readyz). */
  dropFolder?: () => string,
): Promise<OpsServer> {
  const routes: OpsRoutes[] = [metricsRoutes(metrics), consoleOps()];
  return startOpsServer(config, addr, stopping, logger, routes, dropFolder);
}
