import { appendFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readReports } from "../support/drop.js";
import { finish, runCli } from "../support/cli-run.js";
import { spawnNode } from "../support/processes.js";
import { sftpSetup, type SftpSetup } from "../support/sftp-source.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

async function setup(): Promise<SftpSetup> {
  const s = await sftpSetup();
  cleanups.push(() => s.close());
  await s.writeSources();
  return s;
}

/** `n` rows; with `pad`, each has a column the relay ignores holding that many bytes (a large file). */
function rows(prefix: string, n: number, pad = 0): string {
  const note = pad > 0 ? `,${"n".repeat(pad)}` : "";
  let text = `external_id,currency,destination_country,archive_policy${pad > 0 ? ",note" : ""}\n`;
  for (let i = 1; i <= n; i++) text += `${prefix}-${i},EUR,DE,eu-10y${note}\n`;
  return text;
}

const INVOICES = { "a.csv": 1_000, "b.csv": 1_000 } as const;
/**
 * Bytes of each row's ignored column while a download is to be caught under way: 280 KB a file, whose
 * download lasts long enough to be seen; every step after the download is as short whatever the size.
 */
const LARGE_PAD = 250;

async function listing(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [] as string[]);
}

/** Where `run` is killed: each a moment of the pull, seen from outside the process. */
const KILL_POINTS: Record<string, (s: SftpSetup) => Promise<boolean>> = {
  "while a download is under way": async (s) =>
    (await listing(join(s.dir, "processing"))).some((n) => n.endsWith(".download")),
  "once a downloaded file is in processing/": async (s) =>
    (await listing(join(s.dir, "processing"))).some((n) => n.includes("--")),
  "once a file is moved to the server's processing/": async (s) =>
    (await listing(join(s.inbox, "processing"))).length > 0,
  "once a report is written, before it is uploaded": async (s) =>
    (await listing(join(s.dir, "reports"))).length > 0,
};

describe("invoice-relay run with an SFTP source, killed", () => {
  for (const [point, reached] of Object.entries(KILL_POINTS))
    it(`when run is SIGKILLed ${point}, then the next run routes every invoice once, one batch per remote file, and leaves nothing on the server`, async () => {
      const s = await setup();
      const pad = point === "while a download is under way" ? LARGE_PAD : 0;
      for (const [name, n] of Object.entries(INVOICES))
        await writeFile(join(s.inbox, name), rows(name, n, pad));
      const env = { ...s.env, SETTLE_MS: "200", LOCK_DURATION_MS: "2000" };
      const first = spawnNode("workers/cli.js", ["run"], env);
      // Watched closely (a download of this size takes tens of milliseconds): the kill must land there.
      const deadline = Date.now() + 60_000;
      while (!(await reached(s)) && first.child.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 2));
      expect(first.child.exitCode, `run ended before ${point}: ${first.output()}`).toBeNull();
      first.child.kill("SIGKILL");
      await first.exited;

      const again = await runCli(["run"], env, 120_000);
      expect(again.code, again.output).toBe(0);
      expect(again.output, "a pulled file is never taken for one Redis lost").not.toContain(
        "Redis lost data",
      );
      const stats = s.sim.stats();
      expect(stats.effects.externalIdsWithMultipleEffects).toBe(0);
      expect(stats.effects.distinctExternalIds).toBe(INVOICES["a.csv"] + INVOICES["b.csv"]);
      expect([...(await readReports(s.dir)).keys()].sort()).toEqual(Object.keys(INVOICES));
      expect(await s.remote()).toEqual(["archive", "processing", "reports"]);
      expect(await s.remote("processing")).toEqual([]);
      expect(await s.remote("archive")).toHaveLength(2);
      expect((await s.remote("reports")).filter((n) => n.endsWith(".results.csv"))).toHaveLength(2);
    }, 180_000);

  it("when a file is still being uploaded (its writer pausing between writes), then run leaves it, named as still being written, with exit 2, and a run after the upload ends takes it whole", async () => {
    const s = await setup();
    const env = { ...s.env, SETTLE_MS: "600" };
    const path = join(s.inbox, "slow.csv");
    await writeFile(path, rows("S", 10));
    const first = spawnNode("workers/cli.js", ["run"], env);
    let written = 10;
    let running = true;
    void first.exited.then(() => (running = false));
    // The writer appends a row, pauses shorter than SETTLE_MS, and goes on until the run has ended.
    while (running) {
      written += 1;
      await appendFile(path, `S-${written},EUR,DE,eu-10y\n`);
      await new Promise((r) => setTimeout(r, 150));
    }
    const ended = await finish(first);
    expect(ended.code, ended.output).toBe(2);
    expect(ended.output).toMatch(/SFTP source acme: slow\.csv left on the server: it is still being written/);
    expect(s.sim.stats().requests.total).toBe(0);
    expect(await s.remote()).toContain("slow.csv");

    const second = await runCli(["run"], env, 60_000);
    expect(second.code, second.output).toBe(0);
    expect(s.sim.stats().effects.distinctExternalIds).toBe(written);
    const report = (await readReports(s.dir)).get("slow.csv");
    expect(report?.rows).toHaveLength(written);
  });
});
