import { randomUUID } from "node:crypto";
import { cp, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RedisCluster } from "../../src/dev/redis-cluster.js";
import { scanKeys } from "../../src/ledger/redis-client.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cli } from "../cli/ops-support.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { finish, runCli } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { testInvoices, type KeyedInvoice } from "../support/invoices.js";
import { spawnNode, until } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// A private Redis Cluster of three masters, with the CLI run as an operator runs it: REDIS_CLUSTER_NODES
// lists the nodes and QUEUE_PREFIX carries a hash tag (docs/redis-cluster.md).
const API_KEY = "irs_live_cluster_e2e_key_0123456789";
const SAMPLES = fileURLToPath(new URL("../../samples/", import.meta.url));
let cluster: RedisCluster;
let admin: Cluster;
const cleanups = cleanupsAfterEach();

beforeAll(async () => {
  cluster = await RedisCluster.start();
  admin = new Cluster(cluster.seedNodes(), { redisOptions: { maxRetriesPerRequest: 1 } });
});
afterAll(async () => {
  admin.disconnect();
  await cluster.dispose();
});

async function dropDir(): Promise<string> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  return drop.dir;
}

async function simulator(options: Parameters<typeof startSimulator>[0] = {}): Promise<SimulatorHandle> {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 23, ...options });
  cleanups.push(() => sim.close());
  return sim;
}

/** A deployment on the cluster: its own tagged prefix (unless given) and drop folder. */
function clusterEnv(dir: string, apiUrl: string, prefix = `{relay-${randomUUID()}}`): Record<string, string> {
  return cliEnv(
    {
      redisClusterNodes: cluster.nodes.join(","),
      apiUrl,
      apiKey: API_KEY,
      queuePrefix: prefix,
      dropDir: dir,
    },
    { BACKOFF_BASE_MS: "50", BACKOFF_CAP_MS: "500", LOCK_DURATION_MS: "2000" },
  );
}

/** Every key of the cluster whose name contains `text`, from every master. */
async function keysWith(text: string): Promise<string[]> {
  const keys = new Set<string>();
  for await (const page of scanKeys(admin, `*${text}*`)) for (const key of page) keys.add(key);
  return [...keys];
}

async function slotOf(key: string): Promise<number> {
  return Number(await admin.call("CLUSTER", "KEYSLOT", key));
}

/** A CSV drop file of these invoices, one per line from line 2. */
async function dropInvoices(dir: string, name: string, invoices: readonly KeyedInvoice[]): Promise<void> {
  const lines = invoices.map(
    ({ invoice: i }) =>
      `${i.external_id},${i.currency},${i.routing.destination_country},${i.routing.archive_policy}`,
  );
  await writeFile(join(dir, name), `${[CSV_HEADER, ...lines].join("\n")}\n`);
}

/** What `status --json` says of the keys; only the fields this test reads. */
const statusKeys = z.object({
  keys: z.object({ queued: z.number(), retrying: z.number(), succeeded: z.number(), failed: z.number() }),
});

async function keyCounts(env: Record<string, string>) {
  const result = await cli(["status", "--json"], env);
  expect(result.code, result.stderr).toBe(0);
  return statusKeys.parse(JSON.parse(result.stdout)).keys;
}

/** Every row of every report of the folder, with its file. */
async function reportRows(dir: string) {
  const reports = await readReports(dir);
  return [...reports].flatMap(([file, report]) => report.rows.map((row) => ({ file, ...row })));
}

describe("a Redis Cluster without a hash tag in QUEUE_PREFIX", () => {
  it.each([["run"], ["worker"], ["ingest"], ["retry"]])(
    "when `%s` is started with REDIS_CLUSTER_NODES and an untagged QUEUE_PREFIX, then it exits 1 saying to add a hash tag and why, and claims and writes nothing",
    async (command) => {
      const dir = await dropDir();
      await writeFile(join(dir, "night.csv"), `${CSV_HEADER}\n${csvRow("UNTAGGED-1")}\n`);
      const prefix = `relay-${randomUUID()}`;
      // A command that went ahead would keep running (worker): the limit ends it.
      const result = await runCli([command], clusterEnv(dir, "http://127.0.0.1:9/unused", prefix), 15_000);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain(
        `QUEUE_PREFIX (${prefix}) has no hash tag, and REDIS_CLUSTER_NODES is set`,
      );
      expect(result.output).toContain("every key of a deployment must hash to one slot");
      expect(result.output).toContain("e.g. QUEUE_PREFIX={invoice-relay}");
      // the relay's own subfolders may be made before Redis is asked; the file stays unclaimed
      expect((await readdir(dir)).filter((name) => name.endsWith(".csv"))).toEqual(["night.csv"]);
      expect(await readdir(join(dir, "processing")).catch(() => [])).toEqual([]);
      expect(await keysWith(prefix)).toEqual([]);
    },
  );
});

describe("REDIS_URL pointing at a node of a Redis Cluster", () => {
  it.each([["run"], ["worker"], ["status"]])(
    "when `%s` is started with REDIS_URL naming one cluster node, then it exits 1 saying to list the nodes in REDIS_CLUSTER_NODES, and claims and writes nothing",
    async (command) => {
      const dir = await dropDir();
      await writeFile(join(dir, "night.csv"), `${CSV_HEADER}\n${csvRow("URL-1")}\n`);
      const tag = `relay-${randomUUID()}`;
      const env = clusterEnv(dir, "http://127.0.0.1:9/unused", `{${tag}}`);
      delete env["REDIS_CLUSTER_NODES"];
      env["REDIS_URL"] = `redis://${cluster.nodes[0] ?? ""}`;
      const result = await runCli([command], env, 15_000);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain("points at a node of a Redis Cluster");
      expect(result.output).toContain("List the cluster's nodes in REDIS_CLUSTER_NODES instead");
      // the relay's own subfolders may be made before Redis is asked; the file stays unclaimed
      expect((await readdir(dir)).filter((name) => name.endsWith(".csv"))).toEqual(["night.csv"]);
      expect(await readdir(join(dir, "processing")).catch(() => [])).toEqual([]);
      expect(await keysWith(tag)).toEqual([]);
    },
  );
});

describe("invoice-relay on a Redis Cluster with a hash-tagged QUEUE_PREFIX", () => {
  it("when `run` is given the sample files and the service fails and loses some answers, then every invoice ends final with one effect per key, and every key of the deployment is in the tag's slot", async () => {
    const dir = await dropDir();
    for (const name of ["invoices-eu.csv", "invoices-us.ndjson", "invoices-apac.json"])
      await cp(join(SAMPLES, name), join(dir, name));
    const sim = await simulator({ errorRate: 0.2, lostRate: 0.1 });
    const tag = `relay-${randomUUID()}`;
    const env = clusterEnv(dir, sim.url, `{${tag}}`);

    const result = await runCli(["run"], env, 45_000);
    expect(result.code, result.output).toBe(2); // the samples hold 6 rejected rows (samples/README.md)

    const rows = await reportRows(dir);
    expect(rows.filter((r) => r.status !== "succeeded" && r.status !== "rejected")).toEqual([]);
    const succeeded = rows.filter((r) => r.status === "succeeded");
    expect(succeeded).toHaveLength(20);
    expect(rows.filter((r) => r.status === "rejected")).toHaveLength(6);
    expect(new Set(succeeded.map((r) => r.idempotency_key)).size).toBe(20);
    expect(sim.stats().effects).toMatchObject({ total: 20, distinctKeys: 20, keysWithMultipleEffects: 0 });
    for (const row of succeeded) expect(sim.attempts(row.idempotency_key).length).toBeGreaterThan(0);
    expect(await readdir(join(dir, "processing"))).toEqual([]);

    const keys = await keysWith(tag);
    expect(keys.length).toBeGreaterThan(0);
    const slot = await slotOf(`{${tag}}`);
    const elsewhere: string[] = [];
    for (const key of keys) if ((await slotOf(key)) !== slot) elsewhere.push(key);
    expect(elsewhere).toEqual([]);
  });

  it("when a worker is killed with SIGKILL mid-batch and another worker is started, then every invoice succeeds with one effect each", async () => {
    const dir = await dropDir();
    const sim = await simulator({ latencyMs: { min: 2, max: 10 } });
    const tag = `crash-${randomUUID()}`;
    const env = clusterEnv(dir, sim.url, `{${tag}}`);
    const invoices = testInvoices(1000, tag);
    await dropInvoices(dir, "crash.csv", invoices);
    const ingested = await runCli(["ingest"], env);
    expect(ingested.code, ingested.output).toBe(0);

    const first = spawnNode("workers/submit-worker.js", [], env);
    await until(() => Promise.resolve(sim.stats().effects.total >= 200), 30_000, "200 effects");
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(sim.stats().effects.total).toBeLessThan(1000);

    const second = spawnNode("workers/submit-worker.js", [], env);
    try {
      await until(
        () => Promise.resolve(sim.stats().effects.distinctKeys === 1000),
        60_000,
        "an effect for every invoice",
      );
      // The service has them all; the ledger records each answer right after it.
      await until(
        async () => (await keyCounts(env)).succeeded === 1000,
        20_000,
        "every invoice succeeded in the ledger",
      );
    } finally {
      second.child.kill("SIGTERM");
      const stopped = await finish(second, 15_000);
      expect(stopped.code, stopped.output).toBe(0);
    }
    expect(await keyCounts(env)).toEqual({ queued: 0, retrying: 0, succeeded: 1000, failed: 0 });
    expect(sim.stats().effects).toMatchObject({
      total: 1000,
      distinctKeys: 1000,
      keysWithMultipleEffects: 0,
    });
    for (const { key } of invoices.slice(0, 20))
      expect(sim.attempts(key).some((a) => a.status === 201)).toBe(true);
  });

  it("when every invoice failed while the service was down, then `retry` and another `run` send each once more, and all end succeeded with one effect per key", async () => {
    const dir = await dropDir();
    const sim = await simulator({ errorRate: 1 });
    const tag = `retry-${randomUUID()}`;
    const env = { ...clusterEnv(dir, sim.url, `{${tag}}`), MAX_ATTEMPTS: "1" };
    const invoices = testInvoices(5, tag);
    await dropInvoices(dir, "night.csv", invoices);

    const failed = await runCli(["run"], env);
    expect(failed.code, failed.output).toBe(2);
    expect((await reportRows(dir)).map((r) => r.status)).toEqual(Array(5).fill("failed"));
    expect(await keyCounts(env)).toMatchObject({ failed: 5, succeeded: 0 });

    sim.setFaults({ errorRate: 0 });
    const retry = await runCli(["retry"], env);
    expect(retry.code, retry.output).toBe(0);
    expect(retry.output).toContain("re-enqueued 5 failed invoice(s) with their original keys");

    const again = await runCli(["run"], env);
    expect(again.code, again.output).toBe(0);
    expect(await keyCounts(env)).toEqual({ queued: 0, retrying: 0, succeeded: 5, failed: 0 });
    const latest = (await reportRows(dir)).filter((r) => r.status === "succeeded");
    expect(latest.map((r) => r.idempotency_key).sort()).toEqual(invoices.map((i) => i.key).sort());
    for (const { key } of invoices) expect(sim.attempts(key).map((a) => a.status)).toEqual([503, 201]);
    expect(sim.stats().effects).toMatchObject({ total: 5, distinctKeys: 5, keysWithMultipleEffects: 0 });
  });
});
