import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RedisCluster } from "../../src/dev/redis-cluster.js";

let cluster: RedisCluster;
let client: Cluster;
const direct: Redis[] = [];

beforeAll(async () => {
  cluster = await RedisCluster.start();
  client = new Cluster(cluster.seedNodes(), { redisOptions: { maxRetriesPerRequest: 1 } });
});
afterAll(async () => {
  client.disconnect();
  for (const node of direct) node.disconnect();
  await cluster.dispose();
});

/** A plain client to one node, which answers for its own slots only (MOVED for the others). */
function nodeClient(port: number): Redis {
  const node = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1 });
  direct.push(node);
  return node;
}

/** CLUSTER SLOTS: [from, to, [master host, master port, id, …], …replicas] per range. */
const ClusterSlots = z
  .array(z.tuple([z.number(), z.number(), z.tuple([z.string(), z.number()], z.unknown())], z.unknown()))
  .transform((ranges) => ranges.map(([from, to, [, port]]) => ({ from, to, port })));

async function slotRanges(): Promise<{ from: number; to: number; port: number }[]> {
  return ClusterSlots.parse(await client.call("CLUSTER", "SLOTS"));
}

/** The port of the master that serves `slot`. */
async function ownerOf(slot: number): Promise<number> {
  const ranges = await slotRanges();
  const range = ranges.find((r) => r.from <= slot && slot <= r.to);
  if (range === undefined) throw new Error(`no master serves slot ${slot}`);
  return range.port;
}

async function slotOf(key: string): Promise<number> {
  return Number(await client.call("CLUSTER", "KEYSLOT", key));
}

describe("a private Redis Cluster", () => {
  it("when a private cluster is started, then three masters serve all 16384 slots and ioredis' Cluster client writes and reads keys in different slots, and a hash-tagged key family lands in one slot", async () => {
    const ports = cluster.seedNodes().map((n) => n.port);
    expect(cluster.nodes).toEqual(ports.map((p) => `127.0.0.1:${p}`));
    expect(new Set(ports).size).toBe(3);
    for (const port of ports) {
      const info = String(await nodeClient(port).call("CLUSTER", "INFO"));
      expect(info).toContain("cluster_state:ok");
      expect(info).toContain("cluster_slots_assigned:16384");
      expect(info).toContain("cluster_known_nodes:3");
      expect(info).toContain("cluster_size:3");
    }
    const ranges = await slotRanges();
    expect(new Set(ranges.map((r) => r.port))).toEqual(new Set(ports));
    expect(ranges.reduce((sum, r) => sum + r.to - r.from + 1, 0)).toBe(16384);

    // One hash tag per master, found by asking the cluster where each tag's slot lives.
    const keyOn = new Map<number, string>();
    for (const tag of "abcdefghijklmnopqrstuvwxyz") {
      const key = `{${tag}}:x`;
      const owner = await ownerOf(await slotOf(key));
      if (!keyOn.has(owner)) keyOn.set(owner, key);
    }
    expect([...keyOn.keys()].sort()).toEqual([...ports].sort());
    for (const [port, key] of keyOn) {
      await client.set(key, `on ${port}`);
      expect(await client.get(key)).toBe(`on ${port}`);
      // The value really lives on that master: its own plain client reads it without a redirect.
      expect(await nodeClient(port).get(key)).toBe(`on ${port}`);
    }

    expect(await slotOf("{invoice-relay}:1")).toBe(await slotOf("{invoice-relay}:2"));
    expect(await slotOf("{invoice-relay}:1")).not.toBe(await slotOf("{other}:1"));
  });

  it("when a MULTI touches keys of one hash tag, then it commits; when it touches keys of two slots on one master, then EXEC fails with CROSSSLOT", async () => {
    const committed = await client.multi().set("{invoice-relay}:1", "a").incr("{invoice-relay}:2").exec();
    expect(committed).toEqual([
      [null, "OK"],
      [null, 1],
    ]);
    expect(await client.mget("{invoice-relay}:1", "{invoice-relay}:2")).toEqual(["a", "1"]);

    // Two keys in different slots of the same master, so the server (not a MOVED) is what refuses.
    const first = "{invoice-relay}:1";
    const owner = await ownerOf(await slotOf(first));
    let second: string | undefined;
    for (let i = 0; second === undefined; i++) {
      const candidate = `{other-${i}}:1`;
      const slot = await slotOf(candidate);
      if (slot !== (await slotOf(first)) && (await ownerOf(slot)) === owner) second = candidate;
    }
    const node = nodeClient(owner);
    await expect(node.multi().set(first, "b").set(second, "c").exec()).rejects.toThrow(/CROSSSLOT/);
    expect(await node.get(first)).toBe("a");
    expect(await node.exists(second)).toBe(0);
  });

  it("when a master is killed and restarted, then it comes back from its nodes.conf as the same node serving the same slots", async () => {
    const [port] = cluster.seedNodes().map((n) => n.port);
    if (port === undefined) throw new Error("the cluster has no node 0");
    const id = String(await nodeClient(port).call("CLUSTER", "MYID"));
    const slotsBefore = (await slotRanges()).filter((r) => r.port === port);

    await cluster.kill(0);
    await cluster.restart(0);

    expect(String(await nodeClient(port).call("CLUSTER", "MYID"))).toBe(id);
    expect((await slotRanges()).filter((r) => r.port === port)).toEqual(slotsBefore);
    const key = `{restart}:probe`;
    await nodeClient(await ownerOf(await slotOf(key))).set(key, "back");
    expect(await client.get(key)).toBe("back");
  });
});
