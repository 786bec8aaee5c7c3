import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_serve_key_0123456789";
let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 11 });
});
afterAll(async () => {
  await sim.close();
});

const cleanups = cleanupsAfterEach();

function spawnCli(args: string[], environment: Record<string, string>): Spawned {
  const proc = spawnNode("workers/cli.js", args, environment);
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

/** The URL a serving command printed ("serving http://…/ until Ctrl-C"), once it has. */
async function servingUrl(proc: Spawned): Promise<string> {
  let url: string | undefined;
  await until(
    async () => {
      url = /serving (http:\/\/127\.0\.0\.1:\d+)\/ until Ctrl-C/.exec(proc.output())?.[1];
      return Promise.resolve(url !== undefined || proc.child.exitCode !== null);
    },
    30_000,
    "the serving line",
  );
  if (url === undefined) throw new Error(`the command ended without serving:\n${proc.output()}`);
  return url;
}

describe("serving after a pass, and the console command", () => {
  it("when run --serve finishes a pass with a rejected row, then it keeps answering on HTTP_ADDR until SIGTERM and exits 2", async () => {
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    await writeFile(
      join(drop.dir, "mixed.csv"),
      `${CSV_HEADER}\n${csvRow("SERVE-1")}\nSERVE-2,EURO,XX,nope\n`,
    );
    const proc = spawnCli(
      ["run", "--serve", "--drop-dir", drop.dir],
      cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "serve" }, { HTTP_ADDR: "127.0.0.1:0" }),
    );
    const url = await servingUrl(proc);
    expect(proc.output()).toMatch(/rejected/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(proc.child.exitCode).toBeNull();
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toEqual({ code: 2, signal: null });
  });

  it("when a run met a refused API key, then the console lists its batch with every row counted and why it waits", async () => {
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    await writeFile(
      join(drop.dir, "held.csv"),
      `${CSV_HEADER}\n${csvRow("HELD-1")}\n${csvRow("HELD-2")}\nHELD-3,EURO,XX,nope\n`,
    );
    const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, name: "held" }, { HTTP_ADDR: "127.0.0.1:0" });
    const refused = spawnCli(["run", "--drop-dir", drop.dir], {
      ...env,
      HTTP_ADDR: "off",
      INVOICE_API_KEY: "irs_live_not_the_right_key_99",
    });
    expect((await refused.exited).code, refused.output()).toBe(1);
    const proc = spawnCli(["console"], env);
    const page = (await (await fetch(`${await servingUrl(proc)}/`)).text()).replace(/<[^>]+>/g, " ");
    const words = page.replace(/\s+/g, " ");
    expect(words).toContain("1 rejected");
    expect(words).toContain("2 waiting");
    expect(words).toContain("waiting: the invoice service refused the API key (HTTP 401)");
  });

  it("when console runs without an API key, then it serves its probes and prints its URL; SIGTERM ends it with 0", async () => {
    const proc = spawnCli(["console"], cliEnv({ name: "console" }, { HTTP_ADDR: "127.0.0.1:0" }));
    const url = await servingUrl(proc);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  });
});
