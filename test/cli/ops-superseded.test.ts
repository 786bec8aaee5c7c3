import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli, opsSetup, statusJson, type OpsSetup } from "./ops-support.js";

const setups: OpsSetup[] = [];
afterEach(async () => {
  for (const s of setups.splice(0)) await s.cleanup();
});

const HEADER = "external_id,currency,destination_country,archive_policy";

async function reportRows(dir: string, batchFile: string): Promise<Map<string, string>> {
  const names = (await readdir(join(dir, "reports"))).filter(
    (n) => n.startsWith(`${batchFile}.`) && n.endsWith(".results.csv"),
  );
  expect(names).toHaveLength(1);
  const lines = (await readFile(join(dir, "reports", names[0] ?? ""), "utf8")).trim().split("\r\n");
  return new Map(lines.slice(1).map((l) => [l.split(",")[1] ?? "", l.split(",")[3] ?? ""]));
}

describe("retry after a corrected version of a failed invoice", () => {
  it("when an invoice failed on night 1 and its corrected version succeeded on night 2, then retry does not resend the outdated version: it is superseded", async () => {
    const s = await opsSetup({ errorRate: 1 }, { MAX_ATTEMPTS: "1" });
    setups.push(s);
    await writeFile(join(s.dir, "night1.csv"), `${HEADER}\nINV-1,EUR,DE,eu-10y\nINV-2,EUR,DE,eu-10y\n`);
    const night1 = await cli(["run"], s.env);
    expect(night1.code, night1.stderr).toBe(2);
    expect(await reportRows(s.dir, "night1.csv")).toEqual(
      new Map([
        ["INV-1", "failed"],
        ["INV-2", "failed"],
      ]),
    );

    s.sim.setFaults({ errorRate: 0 });
    await writeFile(join(s.dir, "night2.csv"), `${HEADER}\nINV-1,EUR,DE,eu-7y\n`);
    const night2 = await cli(["run"], s.env);
    expect(night2.code, night2.stderr).toBe(0);
    expect((await statusJson(s.env)).keys).toMatchObject({ succeeded: 1, failed: 1, superseded: 1 });
    const text = await cli(["status"], s.env);
    expect(text.stdout).toContain("1 invoice(s) superseded");

    const retry = await cli(["retry"], s.env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toMatch(/re-enqueued 1 failed invoice/);
    const after = await cli(["run"], s.env);
    expect(after.code, after.stdout + after.stderr).toBe(0);

    const effects = s.sim.stats().effects;
    expect(effects.externalIdsWithMultipleEffects, effects.multipleEffectExternalIds.join(",")).toBe(0);
    expect(effects.distinctExternalIds).toBe(2);
    expect(await reportRows(s.dir, "night1.csv")).toEqual(
      new Map([
        ["INV-1", "superseded"],
        ["INV-2", "succeeded"],
      ]),
    );
    const status = await statusJson(s.env);
    expect(status.keys).toMatchObject({ succeeded: 2, failed: 0, superseded: 1 });
    const results = await cli(["results", "--format", "jsonl"], s.env);
    const statuses = results.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { status: string }).status)
      .sort();
    expect(statuses).toEqual(["succeeded", "succeeded", "superseded"]);
  });
});
