import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisTarget } from "../../src/config/redis-target.js";
import { RedisCluster } from "../../src/dev/redis-cluster.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import type { RedisClient } from "../../src/ledger/redis-client.js";
import { createRedis, ensureConnected } from "../../src/queue/connection.js";
import { ClusterNodeUrlError } from "../../src/queue/errors/cluster-node-url-error.js";
import { EvictingRedisError } from "../../src/queue/errors/evicting-redis-error.js";
import { UntaggedQueuePrefixError } from "../../src/queue/errors/untagged-queue-prefix-error.js";
import { checkKeyLayout, checkRedis } from "../../src/queue/redis-checks.js";

// A private 3-master cluster: the tests change maxmemory-policy on one master and add an ACL user.
let cluster: RedisCluster;
const opened: { disconnect(): void }[] = [];

beforeAll(async () => {
  cluster = await RedisCluster.start();
});
afterAll(async () => {
  for (const client of opened) client.disconnect();
  await cluster.dispose();
});

function clusterTarget(
  credentials: { username?: string; password?: string } = {},
): Extract<RedisTarget, { kind: "cluster" }> {
  return {
    kind: "cluster",
    nodes: cluster.seedNodes(),
    username: credentials.username,
    password: credentials.password,
    tls: false,
  };
}

async function connect(target: RedisTarget): Promise<RedisClient> {
  const client = createRedis(target, "producer");
  opened.push(client);
  client.on("error", () => undefined);
  await ensureConnected(client, target);
  return client;
}

/** A plain client to each master, to change what that one server says. */
function masters(): Redis[] {
  const clients = cluster.nodes.map(
    (address) => new Redis(`redis://${address}`, { maxRetriesPerRequest: 1 }),
  );
  opened.push(...clients);
  return clients;
}

const writer = { access: "read-write", allowEvicting: false, safeUrl: "" } as const;

describe("checkRedis on a Redis Cluster", () => {
  it("when one master may evict keys, then a writer is refused naming that master only, a reader is warned, and ALLOW_EVICTING_REDIS turns the refusal into a warning", async () => {
    const client = await connect(clusterTarget());
    const [, second] = masters();
    if (second === undefined) throw new Error("the cluster has no second master");
    const address = cluster.nodes[1] ?? "";
    await second.config("SET", "maxmemory-policy", "allkeys-lru");
    try {
      const refused = await checkRedis(client, writer).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(EvictingRedisError);
      const message = (refused as EvictingRedisError).message;
      expect(message).toContain(`maxmemory-policy is allkeys-lru on master ${address}:`);
      expect(message).toContain("Set it to noeviction on every master");
      for (const other of [cluster.nodes[0], cluster.nodes[2]]) expect(message).not.toContain(other);

      const read = await checkRedis(client, { ...writer, access: "read-only" });
      expect(read).toEqual([
        expect.stringContaining(`maxmemory-policy is allkeys-lru on master ${address}:`),
      ]);
      const allowed = await checkRedis(client, { ...writer, allowEvicting: true });
      expect(allowed.join("\n")).toContain(`allkeys-lru on master ${address} and ALLOW_EVICTING_REDIS=true`);
    } finally {
      await second.config("SET", "maxmemory-policy", "noeviction");
    }
  });

  it("when every master refuses INFO and CONFIG (as managed Redis may), then a writer is warned naming the masters, and not stopped", async () => {
    for (const master of masters())
      await master.acl("SETUSER", "limited", "on", ">limited-pw", "~*", "&*", "+@all", "-info", "-config");
    const client = await connect(clusterTarget({ username: "limited", password: "limited-pw" }));
    await expect(client.info("memory")).rejects.toThrow(/NOPERM/);

    const warnings = await checkRedis(client, writer);
    expect(warnings).toEqual([expect.stringContaining("could not read Redis maxmemory-policy on masters ")]);
    for (const address of cluster.nodes) expect(warnings[0]).toContain(address);
  });

  it("when every master serves noeviction, then the only warning is that persistence is off on each of them", async () => {
    const client = await connect(clusterTarget());
    const warnings = await checkRedis(client, writer);
    expect(warnings).toEqual([expect.stringMatching(/^Redis persistence is off on masters /)]);
    for (const address of cluster.nodes) expect(warnings[0]).toContain(address);
    expect(await checkRedis(client, { ...writer, access: "read-only" })).toEqual([]);
  });

  it("when REDIS_URL names one node of the cluster, then every command is refused, saying to list the nodes in REDIS_CLUSTER_NODES", async () => {
    const url = `redis://${cluster.nodes[0] ?? ""}`;
    const single = createRedis(url, "producer");
    opened.push(single);
    await ensureConnected(single, url);
    for (const access of ["read-write", "read-only"] as const) {
      const refused = await checkRedis(single, { ...writer, access, safeUrl: url }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, access).toBeInstanceOf(ClusterNodeUrlError);
      expect((refused as Error).message).toContain("List the cluster's nodes in REDIS_CLUSTER_NODES instead");
    }
  });
});

describe("connecting to REDIS_CLUSTER_NODES", () => {
  it("when the nodes listed are a standalone Redis, then connecting fails naming REDIS_CLUSTER_NODES and what the node said", async () => {
    const server = await RedisServer.start();
    try {
      const port = Number(new URL(server.url).port);
      const target: RedisTarget = { ...clusterTarget(), nodes: [{ host: "127.0.0.1", port }] };
      const client = createRedis(target, "producer");
      opened.push(client);
      client.on("error", () => undefined);
      await expect(ensureConnected(client, target, 2000)).rejects.toThrow(
        new RegExp(
          `Redis Cluster at 127\\.0\\.0\\.1:${port} is not ready .*cluster support disabled.*Check REDIS_CLUSTER_NODES\\.`,
        ),
      );
    } finally {
      await server.dispose();
    }
  });
});

describe("checkKeyLayout", () => {
  it("when the target is a cluster and QUEUE_PREFIX has no hash tag, then it is refused saying to add one; a tagged prefix, or one server, is fine", () => {
    expect(() => {
      checkKeyLayout(clusterTarget(), "invoice-relay");
    }).toThrow(UntaggedQueuePrefixError);
    expect(() => {
      checkKeyLayout(clusterTarget(), "invoice-relay");
    }).toThrow(/add a hash tag.*e\.g\. QUEUE_PREFIX=\{invoice-relay\}/i);
    expect(() => {
      checkKeyLayout(clusterTarget(), "acme-{relay}");
    }).not.toThrow();
    expect(() => {
      checkKeyLayout({ kind: "single", url: "redis://127.0.0.1:6379" }, "invoice-relay");
    }).not.toThrow();
  });
});
