import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { runCli } from "../support/cli-run.js";
import { START_UP_MS } from "../support/processes.js";
import { readReports } from "../support/drop.js";
import {
  startHostileSftpServer,
  startSilentServer,
  type HostileOptions,
  type HostileSftpServer,
  type Lies,
} from "../support/hostile-sftp-server.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const cleanups = cleanupsAfterEach();
const HEADER = "external_id,currency,destination_country,archive_policy\n";
const row = (id: string) => `${id},EUR,DE,eu-10y\n`;

/** The pass's --deadline (its start-up and a few seconds), and its grace on SIGTERM (SHUTDOWN_GRACE_MS). */
const DEADLINE_MS = START_UP_MS + 4_000;
const GRACE_MS = 1000;
/**
 * What a run may take past its deadline and grace: the closing writes, on a busy machine. Well short
 * of the hard stop (CLOSING_BOUND_MS, 35 s, after the grace), so a run that ends only by it fails here.
 */
const MARGIN_MS = 20_000;
const BOUND_MS = DEADLINE_MS + GRACE_MS + MARGIN_MS;

/** The local drop folder's one file: it must be sent whatever the SFTP source does. */
const LOCAL = HEADER + row("LOCAL-1") + row("LOCAL-2");

/**
 * A drop folder holding LOCAL, whose one SFTP source is the hostile server serving `file` with its lies;
 * `port`: another server to connect to instead (one that says nothing).
 */
async function world(
  file: [string, string, Lies],
  options: HostileOptions = {},
  port?: number,
  /** A second source, `other`, whose server misbehaves in no way. */
  other?: [string, string],
  /** More settings of the run. */
  more: Record<string, string> = {},
) {
  const tree = await mkdtemp(join(tmpdir(), "relay-deadline-"));
  cleanups.push(() => rm(tree, { recursive: true, force: true }));
  const dropDir = join(tree, "drop");
  await mkdir(dropDir);
  const local = join(dropDir, "local.csv");
  await writeFile(local, LOCAL);
  const past = new Date(Date.now() - 60_000);
  await utimes(local, past, past);
  const server = await startHostileSftpServer(options);
  const sim = await startSimulator({ apiKey: API_KEY, seed: 9 });
  cleanups.push(
    () => server.close(),
    () => sim.close(),
  );
  const [name, content, lies] = file;
  server.list(name, content, undefined, lies);
  const url = port === undefined ? server.url() : `sftp://partner@127.0.0.1:${port}${server.inbox}`;
  const source = (name: string, at: string, of: HostileSftpServer) => [
    `  - name: ${name}`,
    `    url: "${at}"`,
    `    key_file: "${of.clientKeyFile}"`,
    `    host_key: "${of.fingerprint}"`,
  ];
  const lines = ["sftp:", ...source("acme", url, server)];
  if (other !== undefined) {
    const healthy = await startHostileSftpServer();
    cleanups.push(() => healthy.close());
    healthy.list(...other);
    lines.push(...source("other", healthy.url(), healthy));
  }
  await writeFile(join(dropDir, "sources.yaml"), [...lines, ""].join("\n"));
  const env = cliEnv(
    { apiUrl: sim.url, apiKey: API_KEY, name: "deadline", dropDir },
    { SETTLE_MS: "200", SHUTDOWN_GRACE_MS: String(GRACE_MS), ...more },
  );
  return { server, sim, env, dropDir };
}

async function run(env: Record<string, string>) {
  // Killed well after the bound, so that an overrun shows as one, with its output.
  const result = await runCli(["run", "--deadline", `${DEADLINE_MS}ms`], env, BOUND_MS + 60_000);
  expect(result.signal, result.output).toBeNull();
  expect(result.ms, result.output).toBeLessThan(BOUND_MS);
  return result;
}

/** The local file's rows were each sent once, and nothing else was (`more`: rows of the source). */
function expectLocalSentOnce(sim: Awaited<ReturnType<typeof startSimulator>>, more = 0): void {
  expect(sim.stats().effects).toMatchObject({ total: 2 + more, keysWithMultipleEffects: 0 });
}

/** The local file's batch was reported within the pass, whatever the source did; nothing guessed at. */
async function expectLocalReported(dropDir: string, output: string): Promise<void> {
  expect([...(await readReports(dropDir)).keys()], output).toContain("local.csv");
  expect(output).not.toMatch(/Redis (lost|frozen)/);
}

function expectNoMoreRead(server: HostileSftpServer, name: string, listed: number): void {
  // The download's reads end at the listed size; one byte past it is asked for, to tell the file goes on.
  expect(server.served(name)?.furthest).toBeLessThanOrEqual(listed + 1);
}

describe("a pass's deadline against an SFTP server that misbehaves", () => {
  it("when the server lists a file longer than it holds, then run names the file with its sizes and what to do, sends the drop folder's file, and ends by itself with exit 2", async () => {
    const content = HEADER + row("SHORT-1");
    const listed = Buffer.byteLength(content) + 500;
    const { server, sim, env } = await world(["short.csv", content, { size: listed }]);

    const { code, output } = await run(env);

    expect(code, output).toBe(2);
    expect(output).toContain(
      `/inbox/short.csv was listed with ${listed} bytes, but the server ended it after ${Buffer.byteLength(content)}`,
    );
    expect(output).not.toContain("Redis frozen");
    expectLocalSentOnce(sim);
    expectNoMoreRead(server, "short.csv", listed);
  });

  it("when a file listed with 56 bytes never ends, then no more than its listed size is ever read, the file is named, the drop folder's file is sent, and run exits 2", async () => {
    const content = HEADER;
    const listed = Buffer.byteLength(content);
    const { server, sim, env } = await world(["endless.csv", content, { endless: true }]);

    const { code, output } = await run(env);

    expect(code, output).toBe(2);
    expect(output).toContain(`/inbox/endless.csv holds more than the ${listed} bytes it was listed with`);
    expectLocalSentOnce(sim);
    expectNoMoreRead(server, "endless.csv", listed);
  });

  it("when the server sends 1 KB/s, then run ends by its deadline naming the source, the file and how far it got, the drop folder's file is sent, exit 1; a later run goes on from where the download stopped", async () => {
    const content = HEADER + Array.from({ length: 800 }, (_, i) => row(`DRIP-${i}`)).join("");
    const size = Buffer.byteLength(content);
    const drip = await world(["drip.csv", content, {}], { dripBytesPerSecond: 1024 });

    const cut = await run(drip.env);

    expect(cut.code, cut.output).toBe(1);
    expect(cut.output).toMatch(
      /SFTP source acme: the pass's --deadline came while 127\.0\.0\.1:\d+ was asked to read \/inbox\/drip\.csv \(\d+ bytes in\)/,
    );
    expectLocalSentOnce(drip.sim);
    await expectLocalReported(drip.dropDir, cut.output);
    const first = drip.server.served("drip.csv")?.bytes ?? 0;
    expect(first).toBeGreaterThan(1024);
    expect(first).toBeLessThan(size);

    drip.server.drip(undefined);
    const later = await runCli(["run"], drip.env, 60_000);
    expect(later.code, later.output).toBe(0);
    expectLocalSentOnce(drip.sim, 800);
    // Downloaded from where it stopped, then read again whole to check it: not downloaded twice over. The
    // cut may lose what was on its way (a second of the drip at most).
    const second = (drip.server.served("drip.csv")?.bytes ?? 0) - first;
    expect(second).toBeLessThanOrEqual(2 * size - first + 1024);
  });

  it("when one file of a source is downloaded whole and the server then never answers a read of another, then at the deadline the downloaded file is left claimed, not guessed lost by Redis, and run exits 1 naming the source", async () => {
    const { server, env, dropDir } = await world(["stall.csv", HEADER + row("STALL-1"), { stallFrom: 10 }]);
    server.list("good.csv", HEADER + row("GOOD-1"));

    const { code, output } = await run(env);

    expect(code, output).toBe(1);
    expect(output).toMatch(/SFTP source acme: the pass's --deadline came while [^\n]*stall\.csv/);
    expect(output).not.toMatch(/Redis no longer knows/);
    await expectLocalReported(dropDir, output);
  });

  it("when the server stops answering once a file is taken here (a stat never answered), then at the deadline the drop folder's file is reported, the source and what it was asked are named, nothing guesses at Redis, and run exits 1", async () => {
    const { sim, env, dropDir } = await world([
      "stall.csv",
      HEADER + row("STALL-1"),
      { stallStatMoved: true },
    ]);

    const { code, output } = await run(env);

    expect(code, output).toBe(1);
    expect(output).toMatch(
      /SFTP source acme: the pass's --deadline came while 127\.0\.0\.1:\d+ was asked to stat \/inbox\/processing\/[^\n]*--stall\.csv/,
    );
    expectLocalSentOnce(sim);
    await expectLocalReported(dropDir, output);
  });

  it("when the deadline stops the ingest of a source's file while it waits for room in the window, then the drop folder's file, sent before, is still reported, and run exits 1", async () => {
    const rows = Array.from({ length: 6000 }, (_, i) => row(`BIG-${i}`)).join("");
    // Twenty requests a second at most: the window stays full far past the deadline.
    const more = { INGEST_WINDOW: "1000", SUBMIT_CONCURRENCY: "1", SUBMIT_RATE_PER_SEC: "20" };
    const { sim, env, dropDir } = await world(["big.csv", HEADER + rows, {}], {}, undefined, undefined, more);

    const { code, output } = await run(env);

    expect(code, output).toBe(1);
    expect(output).toMatch(/deadline passed with \d+ invoice\(s\) not final yet/);
    expect(sim.stats().effects.keysWithMultipleEffects).toBe(0);
    await expectLocalReported(dropDir, output);
  });

  it("when one source sends 1 KB/s, then another source's file and the drop folder's are taken and sent within the deadline, and only the slow source is named", async () => {
    const content = HEADER + Array.from({ length: 800 }, (_, i) => row(`SLOW-${i}`)).join("");
    const { sim, env } = await world(["slow.csv", content, {}], { dripBytesPerSecond: 1024 }, undefined, [
      "fine.csv",
      HEADER + row("FINE-1"),
    ]);

    const { code, output } = await run(env);

    expect(code, output).toBe(1);
    expect(output).toMatch(/SFTP source acme: the pass's --deadline came while [^\n]*\/inbox\/slow\.csv/);
    expect(output).not.toMatch(/SFTP source other:/);
    expectLocalSentOnce(sim, 1);
  });

  it("when the server never sends its SSH banner, then run ends by its deadline saying so, the drop folder's file is sent, and run exits 1", async () => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const { sim, env } = await world(["never.csv", HEADER + row("NEVER-1"), {}], {}, silent.port);

    const { code, output } = await run(env);

    expect(code, output).toBe(1);
    expect(output).toMatch(
      /SFTP source acme: the pass's --deadline came while connecting to 127\.0\.0\.1:\d+ \(it had sent no SSH banner/,
    );
    expectLocalSentOnce(sim);
  });
});
