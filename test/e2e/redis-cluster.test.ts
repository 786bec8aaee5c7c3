import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { until } from "../support/processes.js";

// A one-node Redis Cluster serving every slot: enough for INFO to say cluster_enabled:1 and for
// multi-key scripts across slots to fail with CROSSSLOT, as on a real cluster.
const API_KEY = "irs_live_e2e_key_0123456789";
const CSV = "external_id,currency,destination_country,archive_policy\nCL-1,EUR,DE,eu-10y\n";
let redis: RedisServer;
let admin: Redis;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await RedisServer.start({
    args: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"],
  });
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  await admin.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
  // The node's cluster state turns ok on its own shortly after; nothing to await but its answer.
  await until(
    async () => String(await admin.call("CLUSTER", "INFO")).includes("cluster_state:ok"),
    10_000,
    "the one-node cluster to serve its slots",
  );
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  admin.disconnect();
  await redis.dispose();
});

describe("a Redis Cluster URL", () => {
  it.each([["run"], ["start", "--watch"], ["worker"], ["ingest"], ["retry"], ["status"], ["results"]])(
    "when REDIS_URL points at a Redis Cluster node, then `%s` exits 1 saying Redis Cluster is not supported, and claims nothing",
    async (...args: string[]) => {
      const drop = await tempDropDir();
      cleanups.push(drop.cleanup);
      await writeFile(join(drop.dir, "cluster.csv"), CSV);
      const env = {
        REDIS_URL: redis.url,
        INVOICE_API_URL: "http://127.0.0.1:9/unused",
        INVOICE_API_KEY: API_KEY,
        QUEUE_PREFIX: `cluster-${randomUUID()}`,
        DROP_DIR: drop.dir,
        SETTLE_MS: "0",
        LOG_LEVEL: "warn",
      };
      // A command that went ahead would keep running (worker, start): the limit ends it.
      const result = await runCli(args, env, 15_000);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain("Redis Cluster is not supported");
      expect(result.output).toContain("REDIS_URL");
      expect(await readdir(drop.dir)).toContain("cluster.csv");
      expect(await readdir(join(drop.dir, "processing")).catch(() => [])).toEqual([]);
      expect(await admin.dbsize()).toBe(0);
    },
  );
});
