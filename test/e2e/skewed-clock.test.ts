import { randomUUID } from "node:crypto";
import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// A machine whose clock is hours off, as a process without NTP sees it: the whole process's Date, through
// a module Node loads before the CLI (NODE_OPTIONS=--import), and nothing else changed.
const API_KEY = "irs_live_skewed_key_0123456789";
const HOUR = 3_600_000;
const cleanups = cleanupsAfterEach();

const SKEW_MODULE = `
const offset = Number(process.env.SKEW_MS);
const RealDate = Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }
  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = SkewedDate;
`;

describe("a `run` on a machine whose clock is hours behind Redis's", () => {
  it("when its batch is reported by a process five hours behind and the same file is dropped again by one on time within RESULTS_RETENTION=1h, then the batch is still kept and every row comes out duplicate", async () => {
    const sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
    const drop = await tempDropDir();
    const folder = await mkdtemp(join(tmpdir(), "relay-skew-"));
    cleanups.push(
      () => sim.close(),
      drop.cleanup,
      () => rm(folder, { recursive: true, force: true }),
    );
    const skew = join(folder, "skew.mjs");
    await writeFile(skew, SKEW_MODULE);
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "skew", dropDir: drop.dir },
      {
        RESULTS_RETENTION: "1h",
      },
    );
    const text =
      [
        "external_id,currency,destination_country,archive_policy",
        ...Array.from({ length: 10 }, (_, i) => `SK-${randomUUID().slice(0, 8)}-${i},EUR,DE,eu-10y`),
      ].join("\n") + "\n";

    // Written on that machine: its time is in the file's mtime too.
    await writeFile(join(drop.dir, "skewed.csv"), text);
    const writtenAt = new Date(Date.now() - 5 * HOUR);
    await utimes(join(drop.dir, "skewed.csv"), writtenAt, writtenAt);
    const behind = await runCli(["run"], {
      ...env,
      NODE_OPTIONS: `--import ${pathToFileURL(skew).href}`,
      SKEW_MS: String(-5 * HOUR),
    });
    expect([behind.code, behind.output]).toEqual([0, expect.any(String)]);
    expect(sim.stats().requests.total).toBe(10);

    await writeFile(join(drop.dir, "skewed.csv"), text);
    const onTime = await runCli(["run"], env);
    expect([onTime.code, onTime.output]).toEqual([0, expect.any(String)]);
    // Reports sort by batch id, which starts with its drop time: the skewed process's first.
    const reports = [...(await readReports(drop.dir)).values()];
    expect(reports.map((r) => [...new Set(r.rows.map((row) => row.status))])).toEqual([
      ["succeeded"],
      ["duplicate"],
    ]);
    expect(reports.map((r) => r.rows.length)).toEqual([10, 10]);
    expect(sim.stats().requests.total).toBe(10);
  }, 120_000);
});
