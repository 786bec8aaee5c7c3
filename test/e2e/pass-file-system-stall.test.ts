import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/cli/context.js";
import { silentLogger } from "../../src/log/logger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { nightlyPass } from "../../src/use-cases/nightly-pass.js";
import { threadsHeld } from "../../src/lifecycle/waits.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { testConfig } from "../support/engine.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { releasePipe } from "../support/named-pipe.js";

// The pass (the nightlyPass use case) on a file system that stops answering a read of a claimed file: a
// named pipe no one writes to, in processing/ under a claimed file's name. Opening it waits for ever, as
// a read of a hung network share does.

const API_KEY = "irs_live_e2e_key_0123456789";
const DEADLINE_MS = 1_000;
/** Generous: the deadline, then the submission worker's close; a pass that waits for the read never ends. */
const LIMIT_MS = DEADLINE_MS + 15_000;
/** Long enough for two one-invoice files to be sent on a busy machine, before the stalled read is cut. */
const NEW_FILES_DEADLINE_MS = 5_000;
const csv = (id: string) =>
  `external_id,currency,destination_country,archive_policy\n${id}-1,EUR,DE,eu-10y\n`;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 5 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

/** A drop folder whose processing/ holds a claimed file that never answers a read; the pass's deps. */
async function stalledDrop(env: Record<string, string> = {}) {
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  const logger = silentLogger();
  const config = testConfig({
    apiUrl: sim.url,
    apiKey: API_KEY,
    prefix: `fs-stall-${randomUUID()}`,
    env: { DROP_DIR: drop.dir, ...env },
  });
  const ctx = await openContext(config, { dropFolder: true, logger });
  cleanups.push(() => ctx.close());
  const stalled = join(drop.dir, "processing", "20261207T180000Z-abcdef--stalled.csv");
  execFileSync("mkfifo", [stalled]);
  // The thread the read holds lets go once the pipe is opened for writing here.
  cleanups.push(async () => {
    releasePipe(stalled);
    await Promise.resolve();
  });
  return { dir: drop.dir, deps: { ...ctx, config, logger } };
}

describe("a read of a claimed file that never returns", () => {
  it(
    "when a claimed file's read never returns, then the pass ends by its deadline, failed, naming that file",
    async () => {
      const { deps } = await stalledDrop();
      const started = Date.now();

      const outcome = await nightlyPass(deps, {
        signal: new AbortController().signal,
        deadline: started + DEADLINE_MS,
        pollMs: 50,
      });

      expect(Date.now() - started).toBeLessThan(LIMIT_MS);
      expect(outcome.kind).toBe("failed");
      expect(outcome.kind === "failed" ? outcome.error.message : "").toMatch(
        /stalled\.csv, read to measure its claim was still under way at the pass's --deadline/,
      );
      // Still held: named among what the process waits for, so its end does not wait for it.
      expect(threadsHeld().join("; ")).toMatch(/stalled\.csv/);
    },
    LIMIT_MS + 10_000,
  );

  it(
    "when a claimed file's read never returns and new files are in the drop folder, then the pass takes, reports and archives them before it ends naming that file",
    async () => {
      const { dir, deps } = await stalledDrop({ SETTLE_MS: "0" });
      await writeFile(join(dir, "first.csv"), csv("FIRST"));
      await writeFile(join(dir, "second.csv"), csv("SECOND"));

      const outcome = await nightlyPass(deps, {
        signal: new AbortController().signal,
        deadline: Date.now() + NEW_FILES_DEADLINE_MS,
        pollMs: 50,
      });

      expect(outcome.kind === "failed" ? outcome.error.message : outcome.kind).toMatch(
        /stalled\.csv, read to measure its claim was still under way at the pass's --deadline/,
      );
      const reports = await readReports(dir);
      expect([...reports.keys()].sort()).toEqual(["first.csv", "second.csv"]);
      expect([...reports.values()].flatMap((r) => r.rows.map((row) => row.status))).toEqual([
        "succeeded",
        "succeeded",
      ]);
      expect((await readdir(join(dir, "archive"))).length).toBe(2);
    },
    LIMIT_MS + 10_000,
  );
});
