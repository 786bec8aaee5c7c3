import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildAgentnetCommand, type AgentnetDeps } from "../../src/cli/commands/agentnet.js";
import { buildProgram, runProgram } from "../../src/cli/program.js";
import { silentLogger } from "../../src/log/logger.js";
import {
  DEV_KEY,
  grant,
  json,
  loseResponse,
  startTokenServer,
  type Reply,
  type TokenServer,
} from "./support/token-server.js";

class Capture extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
}

let home: string;
let server: TokenServer | undefined;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "agentnet-cli-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(home, { recursive: true, force: true });
});

/** Runs `invoice-relay agentnet …` as the binary does, against a scripted service, with a temp home. */
async function cli(
  args: readonly string[],
  replies: readonly Reply[] = [grant()],
  env: NodeJS.ProcessEnv = {},
) {
  server ??= await startTokenServer(replies);
  const stdout = new Capture();
  const stderr = new Capture();
  const deps: AgentnetDeps = {
    env: { AGENTNET_API_URL: server.url, ...env },
    homedir: () => home,
    stdout,
    stderr,
    logger: silentLogger(),
    client: {
      sleep: () => Promise.resolve(),
      retry: { maxAttempts: 3, baseMs: 1, capMs: 1, retryAfterCapMs: 1 },
    },
    now: () => new Date("2026-11-21T02:00:00.000Z"),
  };
  const program = buildProgram([() => buildAgentnetCommand(deps)]);
  const code = await runProgram(program, ["node", "invoice-relay", "agentnet", ...args], { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text, requests: server.requests };
}

const register = ["register", "--name", "Acme relay", "--email", "ops@example.com"];
const defaultPath = () => join(home, ".config", "invoice-relay", "agentnet-credentials.json");

describe("invoice-relay agentnet register", () => {
  it("when the service grants a key, then it is stored 0600 under ~/.config and stdout shows id, prefix and note but not the key", async () => {
    const run = await cli(register);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("developer_id  dev-acct-42");
    expect(run.stdout).toContain("key_prefix    amn_dev_");
    expect(run.stdout).toContain("note          Store this key securely. It is displayed only once.");
    expect(run.stdout).toContain(defaultPath());
    expect(run.stdout + run.stderr).not.toContain(DEV_KEY);
    expect((await stat(defaultPath())).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, ".config", "invoice-relay"))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(defaultPath(), "utf8"))).toEqual({
      version: 1,
      api_url: `${server?.url ?? ""}/`,
      developer_id: "dev-acct-42",
      developer_name: "Acme relay",
      email: "ops@example.com",
      key_prefix: "amn_dev_",
      api_key: DEV_KEY,
      created_at: "2026-11-21T02:00:00.000Z",
    });
  });

  it("when --show-key is given, then the key is printed too, with a warning on stderr", async () => {
    const run = await cli([...register, "--show-key"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`api_key       ${DEV_KEY}`);
    expect(run.stderr).toContain("clear it from terminal scrollback");
  });

  it("when XDG_CONFIG_HOME is set, then the file goes under it", async () => {
    const run = await cli(register, [grant()], { XDG_CONFIG_HOME: join(home, "xdg") });
    expect(run.code).toBe(0);
    const path = join(home, "xdg", "invoice-relay", "agentnet-credentials.json");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("when a key is already stored, then nothing is requested, the file is untouched and the user is told about --force", async () => {
    const path = join(home, "creds.json");
    await writeFile(path, "old content", { mode: 0o600 });
    const run = await cli([...register, "--credentials", path]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--force");
    expect(run.requests).toHaveLength(0);
    expect(await readFile(path, "utf8")).toBe("old content");
  });

  it("when --force is given, then the stored key is replaced", async () => {
    const path = join(home, "creds.json");
    await writeFile(path, "old content", { mode: 0o644 });
    const run = await cli([...register, "--credentials", path, "--force"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ api_key: DEV_KEY });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("when --api-url is plain http to a remote host, then it is refused before anything is written or sent", async () => {
    const run = await cli([...register, "--api-url", "http://agents.example.com"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("must use https://");
    expect(run.stderr).toContain("--allow-insecure-http");
    expect(run.requests).toHaveLength(0);
    await expect(stat(join(home, ".config"))).rejects.toThrow("ENOENT");
  });

  it("when the e-mail address is malformed, then nothing is written or sent", async () => {
    const run = await cli(["register", "--name", "Acme", "--email", "nope"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--email");
    expect(run.requests).toHaveLength(0);
  });

  it("when --email is missing, then commander reports it and exits 1", async () => {
    const run = await cli(["register", "--name", "Acme"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--email");
  });

  it("when the service keeps failing, then exit 1, no credentials file and no temp file is left behind", async () => {
    const run = await cli(register, [json(503, {})]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("after 3 attempts");
    expect(run.requests).toHaveLength(3);
    expect(await readdir(join(home, ".config", "invoice-relay"))).toEqual([]);
  });

  it("when the first answer was lost, then the key is stored and the user is told a second key may exist", async () => {
    const run = await cli(register, [loseResponse, grant()]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("may also have issued a key nobody received");
    expect(JSON.parse(await readFile(defaultPath(), "utf8"))).toMatchObject({ api_key: DEV_KEY });
  });

  it("when the service's note holds terminal escapes, then they are printed escaped", async () => {
    const run = await cli(register, [grant({ note: "keep it\u001b[2J safe" })]);
    expect(run.stdout).toContain("note          keep it\\u001b[2J safe");
    expect(run.stdout).not.toContain("\u001b");
  });

  it("when the service's note quotes the key back, then the key is masked in it", async () => {
    const run = await cli(register, [grant({ note: `Your key ${DEV_KEY} is shown once.` })]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("note          Your key [redacted] is shown once.");
    expect(run.stdout).not.toContain(DEV_KEY);
  });

  it("when the service's key_prefix is longer than the label, then it is printed as given", async () => {
    const run = await cli(register, [grant({ key_prefix: DEV_KEY.slice(0, 12) })]);
    expect(run.stdout).toContain(`key_prefix    ${DEV_KEY.slice(0, 12)}\n`);
  });
});
