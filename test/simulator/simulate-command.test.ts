import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulateCommand, simulateCommand } from "../../src/cli/commands/simulate.js";
import { buildProgram, runProgram } from "../../src/cli/program.js";
import { DEMO_API_KEY } from "../../src/simulator/index.js";
import { header, json, send, submit } from "./support/client.js";

interface Run {
  readonly exit: Promise<number>;
  readonly stdout: PassThrough;
  readonly stderr: () => string;
  stop(): void;
}

/** Runs `invoice-relay simulate ARGS` in this process, with captured output and a stop signal of our own. */
function simulate(args: readonly string[], env: NodeJS.ProcessEnv = {}): Run {
  const stdout = new PassThrough({ encoding: "utf8" });
  const stderr = new PassThrough({ encoding: "utf8" });
  let err = "";
  stderr.on("data", (chunk: string) => (err += chunk));
  let stop: (signal: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const program = buildProgram([
    () => createSimulateCommand({ stdout, stderr, env, stopSignal: () => stopped }),
  ]);
  const exit = runProgram(program, ["node", "invoice-relay", "simulate", ...args], { stdout, stderr });
  return {
    exit,
    stdout,
    stderr: () => err,
    stop: () => {
      stop("SIGTERM");
    },
  };
}

/** The URL from the one line the command prints once it listens. */
async function listeningUrl(run: Run): Promise<string> {
  const [line] = (await once(run.stdout, "data")) as [string];
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
  if (url === undefined) throw new Error(`no URL in ${JSON.stringify(line)}`);
  return url;
}

afterEach(() => {
  process.exitCode = undefined; // the command sets it, as it must in a real process
});

describe("invoice-relay simulate", () => {
  it("when the command module is loaded, then it exports a commander command named simulate", () => {
    const command = simulateCommand();
    expect(command.name()).toBe("simulate");
    expect(command.options.filter((o) => !o.hidden).map((o) => o.long)).toEqual([
      "--port",
      "--host",
      "--seed",
      "--error-rate",
      "--throttle-rate",
      "--retry-after",
      "--lost-rate",
      "--latency",
      "--ruleset-version",
      "--capacity",
      "--burst",
      "--max-in-flight",
      "--latency-at-capacity",
    ]);
  });

  it("when started with fault flags, then it prints its URL, serves with those faults, and exits 0 on the stop signal", async () => {
    const run = simulate(["--port", "0", "--throttle-rate", "1", "--retry-after", "4", "--seed", "9"]);
    const url = await listeningUrl(run);

    const answer = await submit({ url });
    expect(answer.status).toBe(429);
    expect(header(answer, "retry-after")).toBe("4");
    expect(run.stderr()).toContain("throttle-rate=1");
    expect(run.stderr()).toContain("seed=9");
    expect(run.stderr()).toContain("api key: demo key");
    expect(run.stderr()).not.toContain(DEMO_API_KEY);

    run.stop();
    expect(await run.exit).toBe(0);
    await expect(send(`${url}/__sim/health`, "GET")).rejects.toThrow();
  });

  it("when started with --capacity and --burst, then it admits the burst, answers 429 beyond it and prints the capacity", async () => {
    const run = simulate(["--port", "0", "--capacity", "0.5", "--burst", "2"]);
    const url = await listeningUrl(run);

    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await submit({ url })).status);
    expect(statuses).toEqual([201, 201, 429]);
    expect(run.stderr()).toContain("capacity: 0.5/s burst=2");
    run.stop();
    expect(await run.exit).toBe(0);
  });

  it("when INVOICE_API_KEY is set, then that key is the accepted one and it is never printed", async () => {
    const run = simulate(["--port", "0", "--latency", "0-5"], { INVOICE_API_KEY: "irs_live_from_env_123" });
    const url = await listeningUrl(run);
    const sim = { url };

    expect((await submit(sim, { apiKey: "irs_live_from_env_123" })).status).toBe(201);
    expect((await submit(sim)).status).toBe(401);
    expect(json(await send(`${url}/__sim/faults`, "GET"))).toMatchObject({
      faults: { latencyMs: { min: 0, max: 5 } },
    });
    expect(run.stderr()).toContain("api key: INVOICE_API_KEY");
    expect(run.stderr()).not.toContain("irs_live_from_env_123");
    run.stop();
    expect(await run.exit).toBe(0);
  });

  it("when INVOICE_API_KEY_FILE names the key's file, then that key is accepted; both set, or an empty file, is refused naming them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sim-key-"));
    try {
      const file = join(dir, "key");
      await writeFile(file, "irs_live_from_file_456\n");
      const run = simulate(["--port", "0"], { INVOICE_API_KEY_FILE: file });
      const sim = { url: await listeningUrl(run) };
      expect((await submit(sim, { apiKey: "irs_live_from_file_456" })).status).toBe(201);
      expect(run.stderr()).toContain("api key: INVOICE_API_KEY_FILE");
      expect(run.stderr()).not.toContain("irs_live_from_file_456");
      run.stop();
      expect(await run.exit).toBe(0);

      const both = simulate(["--port", "0"], {
        INVOICE_API_KEY_FILE: file,
        INVOICE_API_KEY: "irs_live_x_789",
      });
      expect(await both.exit).toBe(1);
      expect(both.stderr()).toMatch(/INVOICE_API_KEY and INVOICE_API_KEY_FILE are both set/);
      await writeFile(file, "");
      const empty = simulate(["--port", "0"], { INVOICE_API_KEY_FILE: file });
      expect(await empty.exit).toBe(1);
      expect(empty.stderr()).toMatch(/INVOICE_API_KEY_FILE \S+ is empty/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("when --api-key is passed, with or without a value, then it refuses to start, says to set INVOICE_API_KEY and never prints the value", async () => {
    const secret = "irs_live_on_the_command_line_42";
    for (const args of [["--api-key", secret], [`--api-key=${secret}`], ["--api-key"]]) {
      const run = simulate(["--port", "0", ...args], { INVOICE_API_KEY: "irs_live_from_env_123" });
      const outcome = await Promise.race([
        run.exit,
        once(run.stdout, "data").then(() => "listening" as const),
      ]);
      if (outcome === "listening") run.stop();
      expect(outcome, args.join(" ")).toBe(1);
      expect(run.stderr()).toBe(
        "invoice-relay simulate: --api-key is not accepted, because a key on the command line shows in " +
          "the process list (ps); set INVOICE_API_KEY in the environment instead\n",
      );
      expect(run.stderr()).not.toContain(secret);
    }
  });

  it("when flags are bad, then each gets one clear message and the exit code is 1", async () => {
    const run = simulate([
      ...["--port", "99999", "--error-rate", "abc", "--throttle-rate", "1.5"],
      ...["--latency", "80-20", "--seed", "1.5", "--retry-after", "-1"],
    ]);
    expect(await run.exit).toBe(1);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toEqual([
      "invoice-relay simulate: --port must be 0-65535",
      "invoice-relay simulate: --seed must be a whole number",
      "invoice-relay simulate: --error-rate must be a number from 0 to 1",
      "invoice-relay simulate: --throttle-rate must be a number from 0 to 1",
      "invoice-relay simulate: --retry-after must be 0 or more",
      "invoice-relay simulate: --latency MIN must not exceed MAX",
    ]);
  });

  it("when the rates add up to more than 1, then it says so and exits 1", async () => {
    const run = simulate(["--port", "0", "--error-rate", "0.7", "--lost-rate", "0.7"]);
    expect(await run.exit).toBe(1);
    expect(run.stderr()).toMatch(/must not exceed 1/);
  });

  it("when the port is taken, then it names the port and exits 1", async () => {
    const first = simulate(["--port", "0"]);
    const port = new URL(await listeningUrl(first)).port;
    const second = simulate(["--port", port]);
    expect(await second.exit).toBe(1);
    expect(second.stderr()).toContain(`port ${port} on 127.0.0.1 is in use`);
    first.stop();
    expect(await first.exit).toBe(0);
  });
});
