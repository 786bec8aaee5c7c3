import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { loadDeveloperKey } from "../../src/agentnet/credentials-file.js";
import { buildAgentnetCommand } from "../../src/cli/commands/agentnet.js";
import { buildProgram, runProgram } from "../../src/cli/program.js";
import { parseInvoiceApiKey } from "../../src/config/credentials.js";
import { silentLogger } from "../../src/log/logger.js";
import {
  DEMO_API_KEY,
  KEY_PREFIX_LENGTH,
  startSimulator,
  type SimulatorHandle,
} from "../../src/simulator/index.js";

class Capture extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
}

const listingSchema = z.object({
  developerKeys: z.array(z.object({ keySha256: z.string(), keyPrefix: z.string() })),
});

let sim: SimulatorHandle;
let home: string;
beforeAll(async () => {
  sim = await startSimulator();
  home = await mkdtemp(join(tmpdir(), "agentnet-e2e-"));
});
afterAll(async () => {
  await sim.close();
  await rm(home, { recursive: true, force: true });
});

it("when `agentnet register` runs against the simulator, then the key it issued is stored 0600, usable, and never printed", async () => {
  const stdout = new Capture();
  const stderr = new Capture();
  const deps = {
    env: { AGENTNET_API_URL: sim.url },
    homedir: () => home,
    stdout,
    stderr,
    logger: silentLogger(),
  };
  const argv = [
    "node",
    "invoice-relay",
    "agentnet",
    "register",
    "--name",
    "acme-agents",
    "--email",
    "dev@acme.example",
  ];

  const code = await runProgram(buildProgram([() => buildAgentnetCommand(deps)]), argv, { stdout, stderr });

  expect(code).toBe(0);
  const path = join(home, ".config", "invoice-relay", "agentnet-credentials.json");
  expect((await stat(path)).mode & 0o777).toBe(0o600);
  const stored = await loadDeveloperKey(path);
  const record = z.object({ key_prefix: z.string() }).parse(JSON.parse(await readFile(path, "utf8")));
  expect(record.key_prefix).toBe(stored.developerKey.slice(0, KEY_PREFIX_LENGTH));
  expect(stdout.text).toContain(`key_prefix    ${record.key_prefix}`);
  expect(stdout.text).toContain("displayed only once");
  expect(stdout.text + stderr.text).not.toContain(stored.developerKey);

  const listing = await request(`${sim.url}/__sim/developer-keys`);
  const { developerKeys } = listingSchema.parse(await listing.body.json());
  const sha = createHash("sha256").update(stored.developerKey).digest("hex");
  expect(developerKeys.map((k) => k.keySha256)).toContain(sha);
});

it("when the simulator's demo invoice key and an issued developer key meet the classifier, then each is accepted only by its own service", async () => {
  expect(parseInvoiceApiKey(DEMO_API_KEY)).toBe(DEMO_API_KEY);
  const stored = await loadDeveloperKey(join(home, ".config", "invoice-relay", "agentnet-credentials.json"));
  expect(() => parseInvoiceApiKey(stored.developerKey)).toThrow("share no credentials");
});
