import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, dropCsv, opsSetup, statusJson } from "../cli/ops-support.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { readReports } from "../support/drop.js";
import { testInvoices } from "../support/invoices.js";
import { spawnNode, until } from "../support/processes.js";

const cleanups = cleanupsAfterEach();

async function reportFiles(dropDir: string): Promise<string[]> {
  const names = existsSync(join(dropDir, "reports")) ? await readdir(join(dropDir, "reports")) : [];
  return names.filter((n) => !n.startsWith(".")); // the folder's deployment record is no report
}

describe("workers on another machine than the drop folder", () => {
  it("when a worker with no drop folder sends a batch, then it writes no report, and the run beside the drop folder writes it without sending again", async () => {
    const setup = await opsSetup();
    cleanups.push(() => setup.cleanup());
    const { sim, dir, env } = setup;
    const invoices = testInvoices(12, `elsewhere-${randomUUID()}`);
    await dropCsv(dir, "night.csv", invoices);
    const ingested = await cli(["ingest"], env);
    expect(ingested.code, ingested.stderr).toBe(0);

    // The other machine: its DROP_DIR names a folder that is not there (and must not be made).
    const elsewhere = join(dir, "..", `no-drop-folder-${randomUUID()}`);
    const worker = spawnNode("workers/cli.js", ["worker"], { ...env, DROP_DIR: elsewhere });
    cleanups.push(async () => {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    });
    await until(
      async () =>
        (await statusJson(env)).keys.succeeded === invoices.length || worker.child.exitCode !== null,
      60_000,
      "the worker to send every invoice",
    );
    expect((await statusJson(env)).keys.succeeded, worker.output()).toBe(invoices.length);
    expect(await reportFiles(dir)).toEqual([]);
    expect(existsSync(elsewhere)).toBe(false);
    worker.child.kill("SIGTERM");
    expect((await worker.exited).code, worker.output()).toBe(0);
    expect(existsSync(elsewhere)).toBe(false);

    const run = await cli(["run"], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = (await readReports(dir)).get("night.csv");
    expect(report?.rows.map((r) => r.status)).toEqual(invoices.map(() => "succeeded"));
    for (const inv of invoices) expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([201]);
  });
});
