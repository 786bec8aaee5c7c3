import { hostname } from "node:os";
import type { Config } from "../config/load.js";
import { isLoopbackHost } from "../config/loopback.js";
import { describeTarget, redisTarget } from "../config/redis-target.js";

/**
 * How a deployment is named in the drop folder's record (src/ingest/drop-folder-owner.ts): its
 * QUEUE_PREFIX and its Redis, without a password. A Redis on loopback is this machine's own: two
 * machines each with a local Redis are two deployments, so its name carries the host's.
 */
export function deploymentName(config: Config): string {
  const target = redisTarget(config);
  const local = target.kind === "single" && isLoopbackHost(hostOf(target.url));
  return `QUEUE_PREFIX=${config.queuePrefix} on Redis ${describeTarget(target)}${local ? ` of host ${hostname()}` : ""}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
