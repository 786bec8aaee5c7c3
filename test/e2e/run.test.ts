import { cp, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { spawnNode, START_UP_MS } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();

async function setup(simOptions: Parameters<typeof startSimulator>[0] = {}) {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 5, ...simOptions });
  const drop = await tempDropDir();
  cleanups.push(() => sim.close(), drop.cleanup);
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name: "e2e", dropDir: drop.dir },
    {
      BACKOFF_BASE_MS: "50",
      BACKOFF_CAP_MS: "500",
    },
  );
  return { sim, dir: drop.dir, env };
}

async function run(env: Record<string, string>, args: string[] = []) {
  const proc = spawnNode("workers/cli.js", ["run", ...args], env);
  const { code } = await proc.exited;
  return { code, output: proc.output() };
}

const BOM = "\uFEFF";
const MIXED_CSV =
  BOM +
  [
    "External_ID,currency,Routing.Destination_Country,archive_policy,notes",
    '"ACME, Ltd 0001",eur,de,EU-10Y,first',
    "ACME-0002,usd,US,us-east-7y,",
    "ACME-0003,XYZ,US,us-7y,unknown currency",
    '"ACME-0004",gbp,GB,uk-0y,bad retention',
    "ACME-0005,jpy,JP,jp-5y",
    "ACME-0006,chf,CH,ch-1d,",
  ].join("\r\n") +
  "\r\n";
const NDJSON = [
  '{"external_id":"N-1","currency":"EUR","routing":{"destination_country":"FR","archive_policy":"eu-1y"}}',
  '{"external_id": "N-2", broken',
  "",
  '{"external_id":"N-3","currency":"SEK","destination_country":"SE","archive_policy":"eu-north-2y"}',
].join("\n");
const JSON_FILE = JSON.stringify({
  invoices: [
    { external_id: "J-1", currency: "BRL", routing: { destination_country: "BR", archive_policy: "sa-5y" } },
    { external_id: "J-2", currency: "INR", destination_country: "IN", archive_policy: "ap-7y" },
  ],
});

describe("invoice-relay run", () => {
  it("when a drop folder has CSV, NDJSON and JSON files with bad rows and an upload in progress, then it exits 2 with exact reports", async () => {
    const { sim, dir, env } = await setup({ errorRate: 0.2 });
    await writeFile(join(dir, "eu.csv"), MIXED_CSV);
    await writeFile(join(dir, "us.ndjson"), NDJSON);
    await writeFile(join(dir, "br.json"), JSON_FILE);
    await writeFile(join(dir, "late.csv.part"), "external_id,currency\n");

    const { code, output } = await run(env);
    expect(code, output).toBe(2);
    const reports = await readReports(dir);
    const csv = reports.get("eu.csv");
    expect(csv?.header).toBe(
      "line,external_id,idempotency_key,status,http_status,correlation_id,ruleset_version,attempts,error",
    );
    expect(csv?.rows.map((r) => [r.line, r.status])).toEqual([
      [2, "succeeded"],
      [3, "succeeded"],
      [4, "rejected"],
      [5, "rejected"],
      [6, "rejected"],
      [7, "succeeded"],
    ]);
    expect(csv?.rows[0]).toMatchObject({
      external_id: "ACME, Ltd 0001",
      http_status: "201",
      ruleset_version: "2026-10-16.1",
    });
    expect(
      csv?.rows.filter(
        (r) => r.status === "succeeded" && (r.correlation_id === "" || r.idempotency_key === ""),
      ),
    ).toEqual([]);
    expect(csv?.rows[2]).toMatchObject({ external_id: "ACME-0003", idempotency_key: "" });
    expect(csv?.rows[2]?.error).toMatch(/currency/);
    expect(csv?.rows[4]?.error).toMatch(/has 4 field/);
    expect(reports.get("us.ndjson")?.rows.map((r) => [r.line, r.status])).toEqual([
      [1, "succeeded"],
      [2, "rejected"],
      [4, "succeeded"],
    ]);
    expect(reports.get("br.json")?.rows.map((r) => [r.line, r.status])).toEqual([
      [1, "succeeded"],
      [2, "succeeded"],
    ]);
    expect(summarySchema.parse(reports.get("eu.csv")?.summary).counts).toMatchObject({
      succeeded: 3,
      rejected: 3,
    });
    expect(await readdir(dir)).toContain("late.csv.part");
    expect(await readdir(join(dir, "processing"))).toEqual([]);
    expect(sim.stats().effects).toMatchObject({ total: 7, keysWithMultipleEffects: 0 });
    expect(output).toMatch(/eu\.csv/);
  });

  it("when the same file is dropped again, then it exits 0, every row is a duplicate with the original correlation ID and nothing is sent", async () => {
    const { sim, dir, env } = await setup();
    await writeFile(join(dir, "br.json"), JSON_FILE);
    expect((await run(env)).code).toBe(0);
    const first = [...(await readReports(dir)).values()][0]?.rows ?? [];
    const requests = sim.stats().requests.total;

    const archived = (await readdir(join(dir, "archive")))[0] ?? "";
    await cp(join(dir, "archive", archived), join(dir, "br.json"));
    const again = await run(env);
    expect(again.code, again.output).toBe(0);
    const reports = [...(await readReports(dir)).values()];
    const second = reports.find((r) => r.rows.every((row) => row.status === "duplicate"))?.rows ?? [];
    expect(second.map((r) => r.correlation_id)).toEqual(first.map((r) => r.correlation_id));
    expect(second).toHaveLength(2);
    expect(sim.stats().requests.total).toBe(requests);
  });

  it("when the API key is refused, then run exits 1 quickly after a handful of requests, and the next run with the right key finishes", async () => {
    const { sim, dir, env } = await setup();
    const rows = Array.from({ length: 200 }, (_, i) => `K-${i},EUR,DE,eu-10y`);
    await writeFile(
      join(dir, "k.csv"),
      ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
    );
    const started = Date.now();
    const refused = await run({ ...env, INVOICE_API_KEY: "irs_live_not_the_right_key_99" });
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/refused the API key/);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(sim.stats().requests.total).toBeLessThanOrEqual(5);

    const fixed = await run(env);
    expect(fixed.code, fixed.output).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 200, keysWithMultipleEffects: 0 });
    expect(summarySchema.parse([...(await readReports(dir)).values()][0]?.summary).counts.succeeded).toBe(
      200,
    );
  });

  it("when the deadline passes, then run exits 1 and a later run finishes the work", async () => {
    const { sim, dir, env } = await setup({ latencyMs: { min: 40, max: 60 } });
    const rows = Array.from({ length: 300 }, (_, i) => `D-${i},EUR,DE,eu-10y`);
    await writeFile(
      join(dir, "d.csv"),
      ["external_id,currency,destination_country,archive_policy", ...rows].join("\n"),
    );
    const late = await run({ ...env, SUBMIT_CONCURRENCY: "2" }, ["--deadline", `${START_UP_MS + 1000}ms`]);
    expect(late.code).toBe(1);
    expect(late.output).toMatch(/deadline passed/);
    const done = await run(env);
    expect(done.code, done.output).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 300, keysWithMultipleEffects: 0 });
  });
});
