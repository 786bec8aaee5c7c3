import { randomUUID } from "node:crypto";
import { access, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { testRedis } from "../support/redis.js";
import { cliEnv } from "../support/cli-env.js";

const API_KEY = "irs_live_profiles_e2e_key_0123456789";
let sim: SimulatorHandle;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 18 });
  cleanups.push(() => sim.close());
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const CSV = "external_id,currency,destination_country,archive_policy\nP-1,EUR,DE,eu-10y\nP-2,EUR,FR,eu-10y\n";
/** Profile 2 names an encoding invoice-relay does not read. */
const BROKEN = `profiles:
  - match: "*.json"
  - match: "sap-*.csv"
    delimiter: ";"
    encoding: latin-9
`;
const BROKEN_MESSAGE =
  'sources.yaml, profile 2 ("sap-*.csv"), field encoding (line 5): "latin-9" is not an encoding invoice-relay reads; ' +
  "write iso-8859-15, or one of utf-8, utf-16le, utf-16be, windows-1252, iso-8859-1, iso-8859-15";

async function dropFolder(): Promise<{ dir: string; env: Record<string, string> }> {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "profiles", dropDir: drop.dir });
  return { dir: drop.dir, env };
}

/** Redis keys under a prefix: none means the command wrote nothing. */
async function keysUnder(prefix: string): Promise<string[]> {
  const redis = testRedis();
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("a broken source profiles file", () => {
  it("when the drop folder's sources.yaml is broken, then run exits 1 naming the profile and the field, and the drop files stay unclaimed at the top of the drop folder", async () => {
    const { dir, env } = await dropFolder();
    await writeFile(join(dir, "sap-2026-11.csv"), CSV);
    await writeFile(join(dir, "plain.csv"), CSV);
    await writeFile(join(dir, "sources.yaml"), BROKEN);
    const requestsBefore = sim.stats().requests;

    const result = await runCli(["run"], env);

    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(`invoice-relay: ${join(dir, "sources.yaml")}, profile 2`);
    expect(result.output).toContain(BROKEN_MESSAGE.slice("sources.yaml".length));
    expect((await readdir(dir)).sort()).toEqual(["plain.csv", "sap-2026-11.csv", "sources.yaml"]);
    expect(await keysUnder(env["QUEUE_PREFIX"] ?? "")).toEqual([]);
    expect(sim.stats().requests.total).toBe(requestsBefore.total);
  });

  it("when SOURCES_FILE names a file that is not there, then run exits 1 naming SOURCES_FILE, and nothing is claimed", async () => {
    const { dir, env } = await dropFolder();
    await writeFile(join(dir, "plain.csv"), CSV);
    const missing = join(dir, "vendors.yaml");

    const result = await runCli(["run"], { ...env, SOURCES_FILE: missing });

    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(`invoice-relay: SOURCES_FILE ${missing} does not exist.`);
    expect(await readdir(dir)).toEqual(["plain.csv"]);
  });

  it("when ingest is given a file while the profiles are broken, then it exits 1 and the file is neither claimed nor copied", async () => {
    const { dir, env } = await dropFolder();
    const outside = join(dir, "..", `outside-${randomUUID()}`);
    await mkdir(outside);
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await writeFile(join(outside, "sap-1.csv"), CSV);
    await writeFile(join(dir, "sources.yaml"), BROKEN);

    const result = await runCli(["ingest", join(outside, "sap-1.csv")], env);

    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(BROKEN_MESSAGE.slice("sources.yaml".length));
    expect(await readdir(outside)).toEqual(["sap-1.csv"]);
    expect(await exists(join(dir, "processing"))).toBe(false);
  });

  it("when start is started with a broken profiles file, then it exits 1 naming the profile and the field", async () => {
    const { dir, env } = await dropFolder();
    await writeFile(join(dir, "sap-1.csv"), CSV);
    const sources = join(dir, "..", `sources-${randomUUID()}.yaml`);
    await writeFile(sources, BROKEN);
    cleanups.push(() => rm(sources, { force: true }));

    const result = await runCli(["start", "--schedule", "0 2 * * *"], { ...env, SOURCES_FILE: sources });

    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(`${sources}, profile 2 ("sap-*.csv"), field encoding (line 5)`);
    expect(await readdir(dir)).toEqual(["sap-1.csv"]);
  });
});

describe("a file read through its profile", () => {
  it("when a profile says a .json file is NDJSON, then run reads it so, and the summary names the profile, null for a file no profile matches", async () => {
    const { dir, env } = await dropFolder();
    const ndjson = CSV.split("\n")
      .slice(1, 3)
      .map((line) => {
        const [id, currency, country, policy] = line.split(",");
        return JSON.stringify({
          external_id: `N${id ?? ""}`,
          currency,
          routing: { destination_country: country, archive_policy: policy },
        });
      })
      .join("\n");
    await writeFile(join(dir, "vendor-lines.json"), `${ndjson}\n`);
    await writeFile(join(dir, "plain.csv"), CSV);
    await writeFile(
      join(dir, "sources.yaml"),
      'profiles:\n  - match: "vendor-*.json"\n    format: ndjson\n  - match: "sap-*.csv"\n',
    );

    const result = await runCli(["run"], env);

    expect(result.code, result.output).toBe(0);
    const reports = await readReports(dir);
    const vendor = reports.get("vendor-lines.json");
    expect(vendor?.summary).toMatchObject({
      format: "ndjson",
      profile: 'sources.yaml, profile 1 ("vendor-*.json")',
    });
    expect(vendor?.rows.map((r) => [r.line, r.external_id, r.status])).toEqual([
      [1, "NP-1", "succeeded"],
      [2, "NP-2", "succeeded"],
    ]);
    expect(reports.get("plain.csv")?.summary).toMatchObject({ format: "csv", profile: null });
    expect(summarySchema.parse(reports.get("plain.csv")?.summary).counts.succeeded).toBe(2);
  });
});

describe("start and a profiles file edited while it runs", () => {
  function start(env: Record<string, string>): Spawned {
    // Any free port for the health probes, so no other test's start contends for 9464.
    const proc = spawnNode("workers/cli.js", ["start", "--watch", "--schedule", "0 2 * * *"], {
      ...env,
      HTTP_ADDR: "127.0.0.1:0",
    });
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    return proc;
  }

  it("when the profiles file breaks while start runs, then a scan claims nothing and says why; once fixed, the next scan reads files with the new profiles", async () => {
    const { dir, env } = await dropFolder();
    const sources = join(dir, "sources.yaml");
    await writeFile(sources, 'profiles:\n  - match: "first-*.csv"\n');
    const proc = start({ ...env, SETTLE_MS: "200" });
    await until(() => exists(join(dir, "processing")), 15_000, "start to prepare the drop folder");

    await writeFile(sources, BROKEN);
    await writeFile(join(dir, "sap-1.csv"), CSV);
    await until(
      () => Promise.resolve(proc.output().includes("source profiles could not be loaded")),
      15_000,
      "the scan to refuse the broken profiles",
    );
    // in a JSON log line, its quotes escaped
    expect(proc.output()).toContain(JSON.stringify(BROKEN_MESSAGE.slice("sources.yaml".length)).slice(1, -1));
    expect(await exists(join(dir, "sap-1.csv"))).toBe(true);
    expect(await readdir(join(dir, "processing"))).toEqual([]);

    await writeFile(sources, 'profiles:\n  - match: "sap-*.csv"\n    delimiter: ","\n');
    await writeFile(join(dir, "other.csv"), CSV.replace(/P-/g, "O-"));
    await until(
      async () =>
        (await readdir(join(dir, "reports"))).filter((n) => n.endsWith(".summary.json")).length === 2,
      20_000,
      "both files to be reported",
    );
    const reports = await readReports(dir);
    expect(reports.get("sap-1.csv")?.summary).toMatchObject({
      profile: 'sources.yaml, profile 1 ("sap-*.csv")',
    });
    expect(reports.get("other.csv")?.summary).toMatchObject({ profile: null });
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code).toBe(0);
  });
});
