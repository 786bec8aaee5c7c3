import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { runCli } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();
const HEADER = "external_id,currency,destination_country,archive_policy";
const row = (n: number) => `SPAN-${n},EUR,DE,eu-10y`;
const summary = z.object({ rows: z.number(), counts: z.record(z.string(), z.number()) });

describe("a CSV whose stray quote swallows lines", () => {
  it("when a quote opened on line 3 is closed only on line 51, then the report names lines 3–51 as one rejected record, the summary counts the file's 51 data lines, and run exits 2", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 4 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    const lines = [HEADER, row(2), `SPAN-3,"EUR,DE,eu-10y`];
    for (let n = 4; n <= 50; n++) lines.push(row(n));
    lines.push(`SPAN-51,EUR,DE,"eu-10y"`, row(52));
    await writeFile(join(drop.dir, "stray.csv"), `${lines.join("\n")}\n`);

    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "spans", dropDir: drop.dir });
    const result = await runCli(["run", "--deadline", "60s"], env, 90_000);
    expect(result.code, result.output).toBe(2);
    const report = (await readReports(drop.dir)).get("stray.csv");
    expect(report?.rows.map((r) => [r.line, r.status])).toEqual([
      [2, "succeeded"],
      [3, "rejected"],
      [52, "succeeded"],
    ]);
    expect(report?.rows[1]?.error).toBe(
      "(row): lines 3–51: one record of 49 lines: a quote opened on line 3 is never closed before line 51; " +
        "every line between is read as one field (a stray quote on line 3?)",
    );
    const counted = summary.parse(report?.summary);
    expect(counted.rows).toBe(lines.length - 1);
    expect(counted.counts).toMatchObject({ succeeded: 2, rejected: 49 });
  });
});
