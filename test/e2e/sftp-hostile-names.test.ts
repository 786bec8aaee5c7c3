import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { runCli } from "../support/cli-run.js";
import { readReports } from "../support/drop.js";
import { startHostileSftpServer } from "../support/hostile-sftp-server.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();

function csv(id: string): string {
  return `external_id,currency,destination_country,archive_policy\n${id},EUR,DE,eu-10y\n`;
}

/** Every file under `root` but those under `skip`, with its size and content hash. */
async function snapshot(root: string, skip: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (path === skip || path.startsWith(`${skip}/`)) continue;
    const info = await stat(path);
    const hash = entry.isFile()
      ? createHash("sha256")
          .update(await readFile(path))
          .digest("hex")
      : "dir";
    out.set(relative(root, path), `${info.size} ${info.mtimeMs} ${hash}`);
  }
  return out;
}

describe("an SFTP server listing hostile names", () => {
  it("when the server lists names that leave the folder, hold NUL, are too long or are not UTF-8, then each is refused aloud naming the source and nothing outside the drop folder changes, while the other files (line breaks and bidi controls too) are taken and printed escaped", async () => {
    const tree = await mkdtemp(join(tmpdir(), "relay-hostile-"));
    cleanups.push(() => rm(tree, { recursive: true, force: true }));
    const dropDir = join(tree, "drop");
    const outside = join(tree, "outside");
    await mkdir(dropDir);
    await mkdir(outside);
    await writeFile(join(outside, "existing.csv"), "left alone\n");
    const server = await startHostileSftpServer();
    const sim = await startSimulator({ apiKey: API_KEY, seed: 11 });
    cleanups.push(
      () => server.close(),
      () => sim.close(),
    );

    // Each refused name, and how the output must show it.
    const refused: [string, string][] = [
      ["a/../../../outside/rel.csv", "a/../../../outside/rel.csv"],
      [`a/${"../".repeat(20)}${tree.slice(1)}/outside/deep.csv`, `${tree.slice(1)}/outside/deep.csv`],
      [`${outside}/abs.csv`, `${outside}/abs.csv`],
      ["nul\0byte.csv", '"nul\\u0000byte.csv"'],
      [`${"x".repeat(251)}.csv`, `${"x".repeat(251)}.csv`],
      [`${"y".repeat(206)}.csv`, `${"y".repeat(206)}.csv`],
      // What ssh2 makes of a name whose bytes are not UTF-8 (bad\xff\xfename.csv on the server).
      ["bad\ufffd\ufffdname.csv", "bad\ufffd\ufffdname.csv"],
    ];
    const taken: [string, string][] = [
      ["good.csv", "good.csv"],
      ["line\nbreak.csv", '"line\\nbreak.csv"'],
      ["bidi\u202Evsc.txt.csv", '"bidi\\u202evsc.txt.csv"'],
    ];
    for (const [i, [name]] of [...refused, ...taken].entries()) server.list(name, csv(`HOSTILE-${i}`));
    await writeFile(
      join(dropDir, "sources.yaml"),
      [
        "sftp:",
        "  - name: acme",
        `    url: "${server.url()}"`,
        `    key_file: "${server.clientKeyFile}"`,
        `    host_key: "${server.fingerprint}"`,
        "    reports: yes",
        "",
      ].join("\n"),
    );
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "hostile", dropDir },
      { SETTLE_MS: "200", LOG_LEVEL: "info" },
    );
    const before = await snapshot(tree, dropDir);

    for (const pass of [1, 2]) {
      const { code, signal, output } = await runCli(["run"], env, 60_000);
      expect(signal, output).toBeNull();
      // Files were left behind on the server: never "all is well".
      expect(code, output).toBe(2);
      expect(output).not.toMatch(/Unhandled|ENAMETOOLONG|at .*\.js:\d+/);
      for (const [, shown] of refused) {
        const said = output
          .split("\n")
          .filter((l) => l.includes("SFTP source acme") && l.includes(`${shown} left on the server`));
        expect(said.length, `pass ${pass}: ${shown}\n${output}`).toBeGreaterThan(0);
      }
      // A name is never printed raw: no line break or bidi control of a name reaches the output.
      expect(output).not.toContain("line\nbreak");
      expect(output).not.toContain("\u202E");
      expect(output).not.toContain("\0");
      if (pass === 1) for (const [, shown] of taken) expect(output).toContain(shown);
    }

    expect(await snapshot(tree, dropDir)).toEqual(before);
    const status = await runCli(["status"], env);
    expect(status.code, status.output).toBe(0);
    for (const [, shown] of taken) expect(status.output).toContain(shown);
    expect(status.output).not.toContain("line\nbreak");
    expect(status.output).not.toContain("\u202E");
    const reports = await readReports(dropDir);
    expect([...reports.keys()].sort()).toEqual(taken.map(([name]) => name).sort());
    expect(sim.stats().effects).toMatchObject({ total: taken.length, keysWithMultipleEffects: 0 });
    expect(await readdir(join(dropDir, "processing"))).toEqual([]);
    // The refused files are still where the server listed them; the others are archived there.
    for (const [name] of refused) expect(server.listed(name), name).toBeDefined();
    const archived = server.files().filter((p) => p.startsWith(`${server.inbox}/archive/`));
    expect(archived).toHaveLength(taken.length);
  });
});
