import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Redis } from "ioredis";
import { RedisCliMissingError } from "./errors/redis-cli-missing-error.js";
import { findRedisServer, RedisServer } from "./redis-server.js";
import { DevServerError } from "./errors/dev-server-error.js";

/**
 * A private Redis Cluster of three masters (no replicas), each a `redis-server` in its own temporary
 * folder, for tests, benchmarks and the demo; the cluster counterpart of `RedisServer`.
 */
export interface RedisClusterOptions {
  /** Append-only file with fsync every second on every node, as production should run it. */
  readonly aof?: boolean;
  /**
   * How long a node may not answer before the others mark it failed. Short, so a test that kills a node
   * sees the cluster turn `fail` (its slots unserved) quickly; Redis' own default is 15 s.
   */
  readonly nodeTimeoutMs?: number;
}

/** A node's address as ioredis' `new Cluster([...])` takes it. */
export interface ClusterSeedNode {
  readonly host: string;
  readonly port: number;
}

const HOST = "127.0.0.1";
const MASTERS = 3;
const FORM_TIMEOUT_MS = 30_000;
const STATE_OK_TIMEOUT_MS = 20_000;
const CLI_CANDIDATES = ["/usr/bin/redis-cli", "/usr/local/bin/redis-cli"];

export class RedisCluster {
  private constructor(private readonly servers: readonly RedisServer[]) {}

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const cli = findRedisCli();
    const args = [
      "--cluster-enabled", "yes",
      // Relative: each node keeps it in its own folder, so a restarted node finds its identity and slots.
      "--cluster-config-file", "nodes.conf",
      "--cluster-node-timeout", String(options.nodeTimeoutMs ?? 2000),
    ]; // prettier-ignore
    const started = await Promise.allSettled(
      Array.from({ length: MASTERS }, () => RedisServer.start({ args, aof: options.aof ?? false })),
    );
    const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const cluster = new RedisCluster(servers);
    try {
      const failed = started.find((s) => s.status === "rejected");
      if (failed !== undefined) throw failed.reason;
      await createCluster(cli, cluster.nodes);
      await cluster.waitUntilServing();
      return cluster;
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
  }

  /** `host:port` of every master, in start order (the index that `kill` and `restart` take). */
  get nodes(): readonly string[] {
    return this.servers.map((s) => `${HOST}:${s.port}`);
  }

  seedNodes(): ClusterSeedNode[] {
    return this.servers.map((s) => ({ host: HOST, port: s.port }));
  }

  /** Kills one master abruptly, as a crash would; its slots go unserved until `restart`. */
  async kill(nodeIndex: number): Promise<void> {
    await this.server(nodeIndex).kill();
  }

  /**
   * Stops one master (if it still runs) and starts it again on its port and folder: it reads its
   * nodes.conf, so it comes back as the same node with the same slots. Resolves once every node says
   * `cluster_state:ok` again.
   */
  async restart(nodeIndex: number): Promise<void> {
    await this.server(nodeIndex).restart();
    await this.waitUntilServing();
  }

  /** Stops every node and removes the folders this process made. */
  async dispose(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.dispose()));
  }

  private server(nodeIndex: number): RedisServer {
    const server = this.servers[nodeIndex];
    if (server === undefined) {
      throw new RangeError(`no node ${nodeIndex}: this cluster has nodes 0 to ${this.servers.length - 1}`);
    }
    return server;
  }

  /**
   * `redis-cli --cluster create` returns once the nodes agree on the configuration, but each node turns
   * its state to ok on its own a little later (a master waits before it serves writes after a start), and
   * the cluster's state is an answer to poll for, not an event.
   */
  private async waitUntilServing(): Promise<void> {
    const deadline = Date.now() + STATE_OK_TIMEOUT_MS;
    const pending = new Set(this.servers);
    let last = "";
    while (pending.size > 0) {
      for (const server of [...pending]) {
        last = await clusterInfo(server.port);
        if (isServing(last)) pending.delete(server);
      }
      if (pending.size === 0) return;
      if (Date.now() > deadline) {
        const ports = [...pending].map((s) => s.port).join(", ");
        throw new DevServerError(
          `the private Redis Cluster did not reach cluster_state:ok within ${STATE_OK_TIMEOUT_MS} ms on ` +
            `port(s) ${ports}; last CLUSTER INFO: ${last.replace(/\r?\n/g, " ")} (logs: redis.log in ` +
            `${[...pending].map((s) => s.dir).join(", ")})`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** `redis-cli` beside `redis-server` (one install ships both), else on PATH, else a usual location. */
function findRedisCli(): string {
  const server = findRedisServer();
  const besideServer = server === undefined ? [] : [join(dirname(server), "redis-cli")];
  const onPath = (process.env["PATH"] ?? "")
    .split(":")
    .filter((dir) => dir !== "")
    .map((dir) => join(dir, "redis-cli"));
  const found = [...besideServer, ...onPath, ...CLI_CANDIDATES].find((p) => existsSync(p));
  if (found === undefined) throw new RedisCliMissingError([...besideServer, ...CLI_CANDIDATES]);
  return found;
}

function createCluster(cli: string, nodes: readonly string[]): Promise<void> {
  const args = ["--cluster", "create", ...nodes, "--cluster-replicas", "0", "--cluster-yes"];
  return new Promise((resolve, reject) => {
    execFile(cli, args, { timeout: FORM_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      reject(new Error(`${cli} ${args.join(" ")} failed (${error.message}):\n${stdout}${stderr}`));
    });
  });
}

function isServing(info: string): boolean {
  return (
    info.includes("cluster_state:ok") &&
    info.includes("cluster_slots_assigned:16384") &&
    info.includes(`cluster_known_nodes:${MASTERS}`)
  );
}

/** CLUSTER INFO of one node, or "" while it does not answer (e.g. just restarted). */
async function clusterInfo(port: number): Promise<string> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined); // a refused connection is an answer here: "not yet"
  try {
    await client.connect();
    const info: unknown = await client.call("CLUSTER", "INFO");
    return typeof info === "string" ? info : "";
  } catch {
    return "";
  } finally {
    client.disconnect();
  }
}
