import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { statusJson } from "../cli/ops-support.js";
import { readReports } from "../support/drop.js";
import { spawnNode, until } from "../support/processes.js";
import { sftpSetup } from "../support/sftp-source.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

const csv = (prefix: string, n: number) =>
  [
    "external_id,currency,destination_country,archive_policy",
    ...Array.from({ length: n }, (_, i) => `${prefix}-${i},EUR,DE,eu-10y`),
  ].join("\n") + "\n";

describe("invoice-relay start --watch with an SFTP source", () => {
  it("when the SFTP server is down, then local files are still taken; once it is back, its files are pulled, sent and reported back on it", async () => {
    const s = await sftpSetup();
    cleanups.push(() => s.close());
    await s.writeSources();
    await s.server.stop();
    const env = { ...s.env, HTTP_ADDR: "127.0.0.1:0", SETTLE_MS: "300" };
    const proc = spawnNode("workers/cli.js", ["start", "--watch", "--schedule", "0 2 * * *"], env);
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    await until(
      async () => (await statusJson(s.env)).sftp_sources.some((src) => src.last_error !== null),
      30_000,
      "the source's failure in status",
    );
    await writeFile(join(s.dir, "local.csv"), csv("L", 5));
    await until(
      async () => (await readReports(s.dir).catch(() => new Map())).has("local.csv"),
      30_000,
      "the local file's report",
    );

    await s.server.start();
    await writeFile(join(s.inbox, "remote.csv"), csv("R", 7));
    await until(
      async () =>
        (await s.remote("reports")).some((n) => n.startsWith("remote.csv.") && n.endsWith(".results.csv")),
      60_000,
      "the remote file's results on the server",
    );
    expect(await s.remote()).toEqual(["archive", "processing", "reports"]);
    expect(s.sim.stats().effects.total).toBe(12);
    const [acme] = (await statusJson(s.env)).sftp_sources;
    expect(acme).toMatchObject({ name: "acme", taken: 1, last_error: null, reports_pending: 0 });
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code, proc.output()).toBe(0);
  });
});
