import { randomUUID } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/cli/context.js";
import { DropFolderUnusableError } from "../../src/ingest/errors/drop-folder-unusable-error.js";
import { silentLogger } from "../../src/log/logger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { nightlyPass } from "../../src/use-cases/nightly-pass.js";
import { dropPass } from "../../src/use-cases/drop-pass.js";
import { tempDropDir } from "../support/drop.js";
import { testConfig } from "../support/engine.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// The check at start (drop-folder-usable.ts) passed; the folder goes before the pass first lists it.

const API_KEY = "irs_live_e2e_key_0123456789";
const CSV = "external_id,currency,destination_country,archive_policy\nGONE-1,EUR,DE,eu-10y\n";

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

async function checkedThenGone() {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  await writeFile(join(drop.dir, "invoices.csv"), CSV);
  const logger = silentLogger();
  const config = testConfig({
    apiUrl: sim.url,
    apiKey: API_KEY,
    prefix: `gone-at-start-${randomUUID()}`,
    env: { DROP_DIR: drop.dir, SETTLE_MS: "0" },
  });
  const ctx = await openContext(config, { dropFolder: true, logger });
  cleanups.push(() => ctx.close());
  await rm(drop.dir, { recursive: true });
  return { dir: drop.dir, deps: { ...ctx, config, logger } };
}

function expectUnusable(error: unknown, dir: string): void {
  expect(error).toBeInstanceOf(DropFolderUnusableError);
  expect((error as Error).message).toContain(`the drop folder ${dir} does not exist`);
  expect((error as Error).message).toMatch(/mount the share or create the folder/);
}

describe("a drop folder that goes between the check at start and the pass's first look", () => {
  it("when run's pass lists it, then it fails with the error the check at start gives (path and what to do), not the file system's", async () => {
    const { dir, deps } = await checkedThenGone();
    const error = await nightlyPass(deps, { signal: new AbortController().signal, pollMs: 50 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expectUnusable(error, dir);
  });

  it("when a scan (start, ingest) lists it, then it fails the same way", async () => {
    const { dir, deps } = await checkedThenGone();
    const error = await dropPass(deps, 0).then(
      () => undefined,
      (e: unknown) => e,
    );
    expectUnusable(error, dir);
  });
});
