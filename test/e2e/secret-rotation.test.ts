import { mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { finish } from "../support/cli-run.js";
import { readReports, summarySchema, tempDropDir } from "../support/drop.js";
import { testInvoices } from "../support/invoices.js";
import { spawnNode, until } from "../support/processes.js";

const OLD_KEY = "irs_live_before_rotation_0a1b2c3d";
const NEW_KEY = "irs_live_after_rotation_4e5f6a7b";
const INVOICES = 240;
const cleanups = cleanupsAfterEach();

/** A drop file of `n` valid invoices. */
function csvOf(n: number, tag: string): string {
  const rows = testInvoices(n, tag).map(
    ({ invoice: i }) =>
      `${i.external_id},${i.currency},${i.routing.destination_country},${i.routing.archive_policy}`,
  );
  return ["external_id,currency,destination_country,archive_policy", ...rows, ""].join("\n");
}

/** A secret written as a rotation writes it: a temporary file renamed over the old one. */
async function rotate(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

describe("the API key rotated in its file mid-night", () => {
  it("when the key file is rewritten and the service then switches keys during a run, then every invoice is routed once, none fails, and the same process finishes", async () => {
    // Answers take a while, so requests sent with the old key are still out when the service switches.
    const sim = await startSimulator({ apiKey: OLD_KEY, seed: 38, latencyMs: { min: 20, max: 60 } });
    const drop = await tempDropDir();
    const secrets = await mkdtemp(join(tmpdir(), "relay-secrets-"));
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => rm(secrets, { recursive: true, force: true }),
    );
    const keyFile = join(secrets, "invoice_api_key");
    await writeFile(keyFile, `${OLD_KEY}\n`, { mode: 0o600 });
    await writeFile(join(drop.dir, "night.csv"), csvOf(INVOICES, "ROT"));

    let accepted = 0;
    let rotated = false;
    sim.events.on("attempt", (attempt) => {
      if (attempt.status !== 201) return;
      accepted++;
      if (rotated || accepted < INVOICES / 3) return;
      rotated = true;
      // As an operator rotates: the new key goes into the mounted file, then the old one is revoked.
      void rotate(keyFile, `${NEW_KEY}\n`).then(() => {
        sim.setApiKey(NEW_KEY);
      });
    });

    const run = spawnNode(
      "workers/cli.js",
      ["run", "--deadline", "2m"],
      cliEnv(
        { apiUrl: sim.url, name: "rotation", dropDir: drop.dir },
        { INVOICE_API_KEY_FILE: keyFile, SUBMIT_CONCURRENCY: "16", LOG_LEVEL: "info" },
      ),
    );
    const result = await finish(run, 150_000);

    expect(rotated).toBe(true);
    expect(result.code, result.output).toBe(0);
    const stats = sim.stats();
    expect(stats.effects).toMatchObject({
      total: INVOICES,
      distinctKeys: INVOICES,
      keysWithMultipleEffects: 0,
    });
    // Requests sent with the old key after its revocation were refused, and sent again with the new one.
    expect(stats.requests.byStatus["401"] ?? 0).toBeGreaterThan(0);
    const [report] = [...(await readReports(drop.dir)).values()];
    const summary = summarySchema.parse(report?.summary);
    expect(summary.counts).toMatchObject({ succeeded: INVOICES, failed: 0 });
    expect(result.output).toMatch(/INVOICE_API_KEY_FILE holds a new value: trying it from now on/);
    expect(result.output).not.toContain(NEW_KEY);
    expect(result.output).not.toContain(OLD_KEY);
    expect(result.output).not.toMatch(/refused the API key/);
  });

  it("when the service revokes the key before the file holds the new one, then start pauses submission, and resumes by itself once the file is rewritten: none failed, no restart", async () => {
    const sim = await startSimulator({ apiKey: OLD_KEY, seed: 39, latencyMs: { min: 20, max: 60 } });
    const drop = await tempDropDir();
    const secrets = await mkdtemp(join(tmpdir(), "relay-secrets-"));
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => rm(secrets, { recursive: true, force: true }),
    );
    const keyFile = join(secrets, "invoice_api_key");
    await writeFile(keyFile, `${OLD_KEY}\n`, { mode: 0o600 });
    const env = cliEnv(
      { apiUrl: sim.url, name: "revoked", dropDir: drop.dir },
      { INVOICE_API_KEY_FILE: keyFile, SUBMIT_CONCURRENCY: "8", LOG_LEVEL: "info", HTTP_ADDR: "127.0.0.1:0" },
    );
    let accepted = 0;
    sim.events.on("attempt", (attempt) => {
      if (attempt.status === 201 && ++accepted === Math.floor(INVOICES / 3)) sim.setApiKey(NEW_KEY);
    });
    const start = spawnNode("workers/cli.js", ["start", "--watch"], env);
    cleanups.push(async () => {
      if (start.child.exitCode === null) start.child.kill("SIGKILL");
      await start.exited;
    });
    await until(async () => (await readdir(drop.dir)).includes("processing"), 15_000, "start to be ready");
    await writeFile(join(drop.dir, "night.csv"), csvOf(INVOICES, "REV"));
    await until(
      () => Promise.resolve(/refused the API key: submission paused/.test(start.output())),
      30_000,
      "the refusal to pause submission",
    );
    await rotate(keyFile, `${NEW_KEY}\n`);
    await until(async () => (await readReports(drop.dir)).size === 1, 60_000, "the report of the night");

    expect(start.child.exitCode).toBeNull();
    const stats = sim.stats();
    expect(stats.effects).toMatchObject({
      total: INVOICES,
      distinctKeys: INVOICES,
      keysWithMultipleEffects: 0,
    });
    const summary = summarySchema.parse([...(await readReports(drop.dir)).values()][0]?.summary);
    expect(summary.counts).toMatchObject({ succeeded: INVOICES, failed: 0 });
    expect(start.output()).toMatch(/resuming submission with the new INVOICE_API_KEY_FILE/);
    expect(start.output()).not.toContain(NEW_KEY);
    start.child.kill("SIGTERM");
    expect((await start.exited).code).toBe(0);
  });
});
