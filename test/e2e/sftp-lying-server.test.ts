import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { runCli } from "../support/cli-run.js";
import { statusJson } from "../cli/ops-support.js";
import { spawnNode, until } from "../support/processes.js";
import { startHostileSftpServer, type HostileOptions, type Lies } from "../support/hostile-sftp-server.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();
const HEADER = "external_id,currency,destination_country,archive_policy\n";
const row = (id: string) => `${id},EUR,DE,eu-10y\n`;

/**
 * A drop folder whose one SFTP source is the hostile server, serving `files` with their lies; `patience`:
 * the source's timeout_seconds, short where the server is silent so that the source fails in seconds.
 */
async function world(files: [string, string, Lies][], options: HostileOptions = {}, patience?: number) {
  const tree = await mkdtemp(join(tmpdir(), "relay-lying-"));
  cleanups.push(() => rm(tree, { recursive: true, force: true }));
  const dropDir = join(tree, "drop");
  await mkdir(dropDir);
  const server = await startHostileSftpServer(options);
  const sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
  cleanups.push(
    () => server.close(),
    () => sim.close(),
  );
  for (const [name, content, lies] of files) server.list(name, content, undefined, lies);
  await writeFile(
    join(dropDir, "sources.yaml"),
    [
      "sftp:",
      "  - name: acme",
      `    url: "${server.url()}"`,
      `    key_file: "${server.clientKeyFile}"`,
      `    host_key: "${server.fingerprint}"`,
      ...(patience === undefined ? [] : [`    timeout_seconds: ${patience}`]),
      "",
    ].join("\n"),
  );
  const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "lying", dropDir }, { SETTLE_MS: "200" });
  return { server, sim, env };
}

describe("an SFTP server that lies about its files", () => {
  it("when the server says a size smaller than the file holds (fewer bytes, or 0), then no byte past that size is read, nothing of the file is sent, each is named with its sizes and left on the server, and run exits 2", async () => {
    const said = Buffer.byteLength(HEADER + row("SHORT-1") + row("SHORT-2"));
    const short = HEADER + row("SHORT-1") + row("SHORT-2") + row("SHORT-3");
    const zero = HEADER + row("ZERO-1") + row("ZERO-2");
    const { server, sim, env } = await world([
      ["short.csv", short, { size: said }],
      ["zero.csv", zero, { size: 0 }],
    ]);

    const { code, output } = await runCli(["run"], env, 60_000);

    expect(code, output).toBe(2);
    expect(output).toContain(`/inbox/short.csv holds more than the ${said} bytes it was listed with`);
    expect(output).toContain("/inbox/zero.csv holds more than the 0 bytes it was listed with");
    expect(sim.stats().effects.total).toBe(0);
    expect(server.served("short.csv")?.furthest).toBeLessThanOrEqual(said + 1);
    expect(server.served("zero.csv")?.furthest).toBeLessThanOrEqual(1);
    expect([server.listed("short.csv")?.toString(), server.listed("zero.csv")?.toString()]).toEqual([
      short,
      zero,
    ]);
  });

  it("when the server keeps the connection up but never answers a read, then run gives up on the source with a message naming the server and what it was asked, exits non-zero, and takes the file at a later run once the server answers", async () => {
    const content = HEADER + row("STALL-1") + row("STALL-2");
    const { server, sim, env } = await world([["stall.csv", content, { stallFrom: 10 }]], {}, 2);

    const stalled = await runCli(["run"], env, 60_000);

    expect(stalled.signal, stalled.output).toBeNull();
    expect(stalled.code, stalled.output).toBe(1);
    expect(stalled.output).toMatch(
      /SFTP source acme: 127\.0\.0\.1:\d+ answered nothing for 2 s while asked to read \/inbox\/stall\.csv/,
    );
    expect(sim.stats().effects.total).toBe(0);
    // Its attempts (3) once in the pass, and one more when the pass reports back: not 3 at every step.
    expect(stalled.output.match(/"attempt":\d/g), stalled.output).toEqual([
      '"attempt":1',
      '"attempt":2',
      '"attempt":3',
      '"attempt":1',
    ]);

    server.list("stall.csv", content);
    const later = await runCli(["run"], env, 60_000);
    expect(later.code, later.output).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 2, keysWithMultipleEffects: 0 });
  });

  it("when the server stops answering once a file is taken whole into processing/ here, then the file is sent as pulled from the source, nothing guesses that Redis lost data, and run exits 1 naming the server and what it was asked", async () => {
    const { sim, env } = await world([["late.csv", HEADER + row("LATE-1"), { stallStatMoved: true }]], {}, 2);

    const { code, signal, output } = await runCli(["run"], env, 90_000);

    expect(signal, output).toBeNull();
    expect(code, output).toBe(1);
    expect(output).toMatch(
      /answered nothing for 2 s while asked to stat \/inbox\/processing\/[^\n]*--late\.csv/,
    );
    expect(output).not.toMatch(/Redis lost data/);
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
  });

  it("when the server accepts the login but never opens the SFTP session, then run gives up on the source with a message saying so, and exits non-zero", async () => {
    const content = HEADER + row("SESSION-1");
    const { sim, env } = await world([["session.csv", content, {}]], { answerSessions: false }, 2);

    const { code, signal, output } = await runCli(["run"], env, 60_000);

    expect(signal, output).toBeNull();
    expect(code, output).toBe(1);
    expect(output).toMatch(
      /SFTP source acme: 127\.0\.0\.1:\d+ accepted the login but opened no SFTP session/,
    );
    expect(sim.stats().effects.total).toBe(0);
  });

  it("when the server lists a symbolic link with a drop file's name, then it is not followed, and every run names it as left on the server and does not exit 0", async () => {
    const { sim, env } = await world([
      ["linked.csv", HEADER + row("LINK-1"), { link: true }],
      ["plain.csv", HEADER + row("PLAIN-1"), {}],
    ]);

    for (const pass of [1, 2]) {
      const { code, output } = await runCli(["run"], env, 60_000);
      expect(code, `pass ${pass}\n${output}`).toBe(2);
      expect(output).toMatch(/SFTP source acme: linked\.csv left on the server: it is a symbolic link/);
    }
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
  });

  it("when the server lists a file a stat then finds gone, and one a stat dates otherwise than the listing, then each is named with its reason in the output and `status`, nothing of them is sent, the other file is taken, and run exits 2", async () => {
    const listedAt = Math.floor(Date.now() / 1000) - 60;
    const { server, sim, env } = await world([
      ["gone.csv", HEADER + row("GONE-1"), { goneAtStat: true }],
      ["redated.csv", HEADER + row("REDATED-1"), { statMtime: listedAt + 7 }],
      ["fine.csv", HEADER + row("FINE-1"), {}],
    ]);

    const { code, output } = await runCli(["run"], env, 60_000);

    expect(code, output).toBe(2);
    const named = (name: string) =>
      new RegExp(`SFTP source acme: ${name.replace(".", "\\.")} left on the server: [^\\n]+`);
    expect(output).toMatch(named("gone.csv"));
    expect(output).toMatch(/gone\.csv left on the server: it was listed, but was gone when asked for/);
    expect(output).toMatch(named("redated.csv"));
    expect(output).toMatch(/redated\.csv left on the server: its size or modification time changed/);
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
    expect(server.listed("gone.csv")).toBeDefined();
    expect(server.listed("redated.csv")).toBeDefined();
    const status = await runCli(["status"], env);
    expect(status.output).toMatch(named("gone.csv"));
    expect(status.output).toMatch(named("redated.csv"));
  });
});

describe("an SFTP server whose files do not stay where it lists them", () => {
  it("when a file vanishes from the server's processing/ once moved there, and another grows at every listing, then run names each with its reason in the output and `status`, sends nothing of them, takes the other file, and exits 2", async () => {
    const { sim, env } = await world([
      ["vanish.csv", HEADER + row("VANISH-1"), { goneOnceMoved: true }],
      ["growing.csv", HEADER + row("GROW-1"), { growing: true }],
      ["fine.csv", HEADER + row("FINE-1"), {}],
    ]);

    const { code, output } = await runCli(["run"], env, 60_000);

    expect(code, output).toBe(2);
    const vanished =
      /SFTP source acme: vanish\.csv left on the server: it went away from the server's processing\//;
    const growing = /SFTP source acme: growing\.csv left on the server: it is still being written/;
    expect(output).toMatch(vanished);
    expect(output).toMatch(growing);
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
    const status = await runCli(["status"], env);
    expect(status.output).toMatch(vanished);
    expect(status.output).toMatch(growing);
  });

  it("when `check --source` meets a file a stat finds gone and one a stat dates otherwise than the listing, then it says each is left, with run's reason, and the other taken", async () => {
    const listedAt = Math.floor(Date.now() / 1000) - 60;
    const { sim, env } = await world([
      ["gone.csv", HEADER + row("GONE-1"), { goneAtStat: true }],
      ["redated.csv", HEADER + row("REDATED-1"), { statMtime: listedAt + 7 }],
      ["fine.csv", HEADER + row("FINE-1"), {}],
    ]);

    const { code, output } = await runCli(["check", "--source", "acme"], env, 60_000);

    expect(code, output).toBe(0);
    expect(output).toContain("SFTP source acme: 1 file(s) would be taken");
    expect(output).toMatch(/leave {2}gone\.csv {2}\(\d+ bytes\) it was listed, but was gone when asked for/);
    expect(output).toMatch(/leave {2}redated\.csv {2}\(\d+ bytes\) its size or modification time changed/);
    expect(output).toMatch(/take {3}fine\.csv/);
    expect(sim.stats().effects.total).toBe(0);
  });

  it("when the server lists a file with no attributes, then `check --source` says it is left, with run's reason and no size it was not given, and run names it so and exits 2", async () => {
    const { sim, env } = await world([
      ["bare.csv", HEADER + row("BARE-1"), { noAttributes: true }],
      ["fine.csv", HEADER + row("FINE-1"), {}],
    ]);
    const why =
      "the server lists it without its size or modification time, so whether it has settled cannot be " +
      "told; ask the partner to have the server send them (or to use a done_marker)";

    const check = await runCli(["check", "--source", "acme"], env, 60_000);
    const json = await runCli(["check", "--source", "acme", "--json"], env, 60_000);
    const run = await runCli(["run"], env, 60_000);

    expect(check.code, check.output).toBe(0);
    expect(check.output).toContain(`leave  bare.csv  (no size listed) ${why}`);
    expect(check.output).not.toContain("undefined");
    const listed = JSON.parse(json.output.trim().split("\n").at(-1) ?? "") as { files: unknown[] };
    expect(listed.files).toContainEqual({ name: "bare.csv", size: null, take: false, why });
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain(`bare.csv left on the server: ${why}`);
    expect(sim.stats().effects.total).toBe(1);
  });

  it("when `start` scans a source listing a file a stat finds gone, one a stat dates otherwise, and one growing at every listing, then its scan names each with its reason in its log and `status`, takes the other file, and ends with exit 2", async () => {
    const listedAt = Math.floor(Date.now() / 1000) - 60;
    const { sim, env } = await world([
      ["gone.csv", HEADER + row("GONE-1"), { goneAtStat: true }],
      ["redated.csv", HEADER + row("REDATED-1"), { statMtime: listedAt + 7 }],
      ["growing.csv", HEADER + row("GROW-1"), { growing: true }],
      ["fine.csv", HEADER + row("FINE-1"), {}],
    ]);
    const proc = spawnNode("workers/cli.js", ["start", "--watch", "--schedule", "0 2 * * *"], {
      ...env,
      HTTP_ADDR: "127.0.0.1:0",
    });
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    const scan = async () =>
      (await statusJson(env)).passes.find((p) => p.kind === "scan" && p.exit_code !== null);

    await until(async () => (await scan()) !== undefined, 45_000, "the scan's end in status");

    const ended = await scan();
    expect(ended?.exit_code, proc.output()).toBe(2);
    const why = new Map((ended?.left ?? []).map((f) => [f.file, f.why]));
    expect(why.get("gone.csv")).toMatch(/^left on the server: it was listed, but was gone when asked for/);
    expect(why.get("redated.csv")).toMatch(/^left on the server: its size or modification time changed/);
    expect(why.get("growing.csv")).toMatch(/^left on the server: it is still being written/);
    expect(proc.output()).toMatch(/SFTP source acme: gone\.csv left on the server: it was listed/);
    expect(sim.stats().effects).toMatchObject({ total: 1, keysWithMultipleEffects: 0 });
    proc.child.kill("SIGTERM");
    expect((await proc.exited).code, proc.output()).toBe(0);
  });
});

describe("an SFTP server whose file is made anew at each read", () => {
  it("when each read of a file gives other bytes of the same size and time, then it is read again once, never archived, and run ends by itself with exit 2 naming it", async () => {
    const { server, sim, env } = await world([
      ["made.csv", `${HEADER}MADE-1,EUR,DE,eu-10y0\n`, { changing: true }],
    ]);

    const { code, signal, output } = await runCli(["run"], env, 60_000);

    expect(signal, output).toBeNull();
    expect(code, output).toBe(2);
    expect(output).toMatch(
      /made\.csv[^\n]*reads as other bytes at each read while its size and time stay the same/,
    );
    expect(
      server.files().filter((p) => p.startsWith(`${server.inbox}/archive/`)),
      output,
    ).toEqual([]);
    expect(sim.stats().effects.keysWithMultipleEffects).toBe(0);
  }, 90_000);
});

describe("an SFTP server listing names that differ only in form", () => {
  it("when it lists é in NFC and NFD, names differing only in case, and names shaped like the relay's own reports, then each is a file of its own, taken, reported and archived once", async () => {
    const names = [
      "caf\u00e9.csv",
      "cafe\u0301.csv",
      "Twin.csv",
      "twin.csv",
      "twin.csv.20261127T000000Z-abcdef.results.csv",
      "20261127T000000Z-abcdef--twin.csv",
    ];
    const { server, sim, env } = await world(
      names.map((name, i): [string, string, Lies] => [name, HEADER + row(`FORM-${i}`), {}]),
    );

    const { code, output } = await runCli(["run"], env, 60_000);

    expect(code, output).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: names.length, keysWithMultipleEffects: 0 });
    const archived = server.files().filter((p) => p.startsWith(`${server.inbox}/archive/`));
    expect(archived).toHaveLength(names.length);
    for (const name of names) expect(server.listed(name), name).toBeUndefined();
  });
});
