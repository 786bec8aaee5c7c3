import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, opsSetup, type OpsSetup } from "./ops-support.js";

const BOM = [0xef, 0xbb, 0xbf];
let setup: OpsSetup | undefined;
afterAll(() => setup?.cleanup());

describe("the encoding `run` writes reports in", () => {
  it("when REPORT_ENCODING=utf-8-bom and one partner's profile says utf-8, then that partner's report has no byte order mark and every other one starts with it", async () => {
    setup = await opsSetup({}, { REPORT_ENCODING: "utf-8-bom" });
    const csv = "external_id,currency,destination_country,archive_policy\nRE-2026-11-0003-Ä,EUR,DE,eu-10y\n";
    await writeFile(join(setup.dir, "finance.csv"), csv);
    await writeFile(join(setup.dir, "partner-1.csv"), csv.replace("0003", "0004"));
    await writeFile(
      join(setup.dir, "sources.yaml"),
      'profiles:\n  - match: "partner-*.csv"\n    report_encoding: utf-8\n',
    );
    const run = await cli(["run"], setup.env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const reports = join(setup.dir, "reports");
    const starts = new Map<string, number[]>();
    for (const name of (await readdir(reports)).filter((n) => n.endsWith(".results.csv")))
      starts.set(name.split(".")[0] ?? "", [...(await readFile(join(reports, name))).subarray(0, 3)]);
    expect(starts.get("finance")).toEqual(BOM);
    expect(starts.get("partner-1")).toEqual([...Buffer.from("lin")]);
  });
});
