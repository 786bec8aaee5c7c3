import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { testRedisUrl } from "../support/redis.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

async function demo(args: string[]): Promise<Spawned> {
  const dir = await mkdtemp(join(tmpdir(), "invoice-relay-demo-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const proc = spawnNode("src/dev/demo.js", args, {
    DEMO_DIR: dir,
    REDIS_URL: testRedisUrl(),
    HTTP_ADDR: "127.0.0.1:0",
    CI: "true",
  });
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

describe("npm run demo", () => {
  it("when asked for the console, then after the summary it serves the batches over HTTP until Ctrl-C and then exits 0", async () => {
    const proc = await demo(["--console"]);
    let url: string | undefined;
    await until(
      async () => {
        url = /serving (http:\/\/127\.0\.0\.1:\d+)\/ until Ctrl-C/.exec(proc.output())?.[1];
        return Promise.resolve(url !== undefined || proc.child.exitCode !== null);
      },
      90_000,
      "the console's address",
    );
    expect(url, proc.output()).toBeDefined();
    expect(proc.output()).toContain("run exited with 2");
    expect((await fetch(`${url ?? ""}/healthz`)).status).toBe(200);
    proc.child.kill("SIGINT");
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  });

  it("when not on a terminal and not asked, then it ends after the summary, says how to open the console, holds no JSON log line, and the run counts the 429s the simulator answered", async () => {
    const proc = await demo([]);
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    const output = proc.output();
    expect(output).toContain("npm run demo -- --console");
    expect(output).not.toContain("serving http");
    expect(output.split("\n").filter((line) => line.trimStart().startsWith("{"))).toEqual([]);
    const answered = /(\d+) answered 429 by its random faults/.exec(output)?.[1];
    expect(answered, output).toBeDefined();
    // What the demo says to expect is what the samples give.
    const expected = Number(/expected: +(\d+) rows rejected/.exec(output)?.[1]);
    const rejected = [...output.matchAll(/^\S+\s+\d{8}T\d{6}Z-\w+\s+\d+\s+\d+\s+(\d+)/gm)];
    expect(rejected.reduce((n, m) => n + Number(m[1]), 0)).toBe(expected);
    // The run says nothing of 429s when there were none.
    expect(/(\d+) request\(s\) refused by the service/.exec(output)?.[1] ?? "0").toBe(answered);
  });

  it("when asked for --sftp, then the samples are pulled from a private SFTP server, each sent once, and their results put back there", async () => {
    const proc = await demo(["--sftp"]);
    expect(await proc.exited, proc.output()).toEqual({ code: 0, signal: null });
    const output = proc.output();
    expect(output).toMatch(/waiting on the SFTP server \S+@127\.0\.0\.1:\d+ \(a private sshd\)/);
    expect(output).toContain("run exited with 2");
    expect(output).toContain("effects: 28 invoices accepted, 0 accepted twice");
    expect(output).toContain("archive/ (5 file(s))");
    expect(output).toContain("reports/ (10 file(s))");
    expect(output).not.toMatch(/SFTP source demo: /); // no failure of the source
  });
});
