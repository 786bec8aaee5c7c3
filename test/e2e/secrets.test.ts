import { randomBytes, randomUUID } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { CSV_HEADER, csvRow, jsonRecord, sentAs } from "../support/bad-inputs.js";
import { runCli, type CliResult } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { startEchoService } from "../support/echo-service.js";
import { cliEnv } from "../support/cli-env.js";

const canary = (label: string) => `${label}${randomBytes(12).toString("hex")}`;
// Each secret is a known prefix and a distinctive body; the scans look for both the whole and the body.
const KEY_BODY = canary("KEYCANARY");
const WRONG_BODY = canary("WRONGCANARY");
const DEV_BODY = canary("DEVCANARY");
const AGT_BODY = canary("AGTCANARY");
const KEY = `irs_live_${KEY_BODY}`;
const WRONG_KEY = `irs_live_${WRONG_BODY}`;
const DEV_KEY = `amn_dev_${DEV_BODY}`;
const AGT_KEY = `xyz_agt_${AGT_BODY}`;
const SECRETS = [KEY, KEY_BODY, WRONG_KEY, WRONG_BODY, DEV_KEY, DEV_BODY, AGT_KEY, AGT_BODY];

let redis: RedisServer;
let client: Redis;
let sim: SimulatorHandle;
const outputs: CliResult[] = [];
const dropDirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

async function newDrop(rows: readonly string[]): Promise<string> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  dropDirs.push(drop.dir);
  if (rows.length > 0) await writeFile(join(drop.dir, "s.csv"), [CSV_HEADER, ...rows, ""].join("\n"));
  return drop.dir;
}

/** Runs the CLI with debug logging against the private Redis; keeps its output for the scan. */
async function cli(args: readonly string[], dir: string, env: Record<string, string> = {}) {
  const result = await runCli(
    args,
    cliEnv(
      { redisUrl: redis.url, apiUrl: sim.url, apiKey: KEY, name: "secrets", dropDir: dir },
      { LOG_LEVEL: "debug", BACKOFF_BASE_MS: "50", BACKOFF_CAP_MS: "200", ...env },
    ),
  );
  outputs.push(result);
  return result;
}

async function connectionsReceived(): Promise<number> {
  const match = /total_connections_received:(\d+)/.exec(await client.info("stats"));
  return Number(match?.[1]);
}

/** Every file under `dir`, recursively, with its bytes. */
async function filesUnder(dir: string): Promise<{ path: string; bytes: Buffer }[]> {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push({ path, bytes: await readFile(path) });
  }
  return out;
}

const holdingSecrets = (files: readonly { path: string; bytes: Buffer }[]) =>
  files.filter((f) => SECRETS.some((s) => f.bytes.includes(s))).map((f) => f.path);

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  sim = await startSimulator({ apiKey: KEY, seed: 21 });
  cleanups.push(
    () => redis.dispose(),
    () => {
      client.disconnect();
      return Promise.resolve();
    },
    () => sim.close(),
  );
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the API key stays secret", () => {
  let refused: CliResult;
  let finished: CliResult;
  let exported: CliResult;
  let echoRefused: CliResult;
  let echoFailed: CliResult;
  let finishedDir: string;
  let echoFailedDir: string;

  beforeAll(async () => {
    // The service already holds S-6's key with another body: sending S-6 gets a 422.
    const taken = sentAs(jsonRecord("S-6")).key;
    const other = await fetch(`${sim.url}/api/v1/invoices`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${KEY}`,
        "idempotency-key": taken,
        "content-type": "application/json",
      },
      body: sentAs(jsonRecord("S-6-other")).body,
    });
    expect(other.status).toBe(201);

    finishedDir = await newDrop(["S-1", "S-2", "S-3", "S-4", "S-5", "S-6"].map(csvRow));
    const prefix = `secrets-${randomUUID()}`;
    refused = await cli(["run"], finishedDir, { QUEUE_PREFIX: prefix, INVOICE_API_KEY: WRONG_KEY });
    finished = await cli(["run"], finishedDir, { QUEUE_PREFIX: prefix });
    exported = await cli(["results", "--format", "jsonl"], finishedDir, { QUEUE_PREFIX: prefix });

    const echo401 = await startEchoService(401);
    const echo422 = await startEchoService(422);
    cleanups.push(
      () => echo401.close(),
      () => echo422.close(),
    );
    echoRefused = await cli(["run"], await newDrop([csvRow("E-1")]), { INVOICE_API_URL: echo401.url });
    echoFailedDir = await newDrop([csvRow("E-2")]);
    echoFailed = await cli(["run"], echoFailedDir, { INVOICE_API_URL: echo422.url });
  });

  it("when run meets a refused key and then a 422, then it exits 1 and then 2 with the 422 reported as failed", async () => {
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toMatch(/refused the API key \(HTTP 401/);
    expect(finished.code, finished.output).toBe(2);
    const rows = [...(await readReports(finishedDir)).values()][0]?.rows ?? [];
    expect(rows.map((r) => [r.external_id, r.status, r.http_status])).toEqual([
      ...["S-1", "S-2", "S-3", "S-4", "S-5"].map((id) => [id, "succeeded", "201"]),
      ["S-6", "failed", "422"],
    ]);
    expect(exported.code, exported.output).toBe(0);
    expect(exported.output).toContain('"status":"failed"');
  });

  it("when the service echoes the key in a 401 and in a 422, then run ends as usual and every echo is redacted", async () => {
    expect(echoRefused.code, echoRefused.output).toBe(1);
    expect(echoRefused.output).toContain("refused Bearer [redacted]");
    expect(echoFailed.code, echoFailed.output).toBe(2);
    const row = [...(await readReports(echoFailedDir)).values()][0]?.rows[0];
    expect(row).toMatchObject({
      status: "failed",
      http_status: "422",
      correlation_id: "req-Bearer [redacted]",
    });
    expect(row?.error).toContain("refused Bearer [redacted]");
  });

  it("when INVOICE_API_URL is http:// to a host that is not loopback, then run refuses before touching Redis or the drop folder", async () => {
    const dir = await newDrop([csvRow("H-1")]);
    const before = await connectionsReceived();
    const result = await cli(["run"], dir, { INVOICE_API_URL: "http://example.invalid" });
    expect(result.code).toBe(1);
    expect(result.output).toContain(
      "INVOICE_API_URL must use https:// for a non-loopback host (got http://example.invalid)",
    );
    expect(await connectionsReceived()).toBe(before);
    expect(await readdir(dir)).toEqual(["s.csv"]);
  });

  it("when --allow-insecure-http is given for the same URL, then configuration passes (nothing to send, exit 0)", async () => {
    const dir = await newDrop([]);
    const result = await cli(["run", "--allow-insecure-http"], dir, {
      INVOICE_API_URL: "http://example.invalid",
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain("nothing to do");
  });

  it.each([
    [
      "a developer key",
      DEV_KEY,
      'INVOICE_API_KEY (starting "amn_") is an agent memory network developer key',
    ],
    ["an agent token", AGT_KEY, 'INVOICE_API_KEY (starting "xyz_") is an agent memory network agent token'],
  ])(
    "when INVOICE_API_KEY is %s of the agent network, then run exits 1 naming the variable, never the key",
    async (_kind, key, message) => {
      const dir = await newDrop([csvRow("A-1")]);
      const result = await cli(["run"], dir, { INVOICE_API_KEY: key });
      expect(result.code).toBe(1);
      expect(result.output).toContain(message);
      expect(result.output).not.toContain(key.slice(4));
      expect(await readdir(dir)).toEqual(["s.csv"]);
    },
  );

  it("when every run is over, then neither key is in the Redis dump, the AOF, the Redis log, the reports or any output", async () => {
    await client.config("SET", "rdbcompression", "no");
    await client.save();
    const redisFiles = await filesUnder(redis.dir);
    const names = redisFiles.map((f) => f.path.slice(redis.dir.length + 1));
    expect(names).toContain("dump.rdb");
    expect(names).toContainEqual(expect.stringContaining("appendonly"));
    // The scan sees real data: the uncompressed dump holds the invoices' ids.
    expect(redisFiles.find((f) => f.path.endsWith("dump.rdb"))?.bytes.includes('"external_id":"S-1"')).toBe(
      true,
    );
    expect(holdingSecrets(redisFiles)).toEqual([]);

    const dropFiles = (await Promise.all(dropDirs.map(filesUnder))).flat();
    expect(dropFiles.filter((f) => f.path.includes("/reports/")).length).toBeGreaterThanOrEqual(4);
    expect(holdingSecrets(dropFiles)).toEqual([]);

    expect(outputs.length).toBeGreaterThanOrEqual(9);
    for (const { output } of outputs) for (const secret of SECRETS) expect(output).not.toContain(secret);
  });
});
