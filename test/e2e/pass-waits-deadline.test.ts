import { randomUUID } from "node:crypto";
import { utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/cli/context.js";
import { silentLogger } from "../../src/log/logger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { nightlyPass } from "../../src/use-cases/nightly-pass.js";
import type { RemotePass } from "../../src/use-cases/remote-pass.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { tempDropDir } from "../support/drop.js";
import { testConfig } from "../support/engine.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// The pass (the nightlyPass use case) with an SFTP source, through its port, whose server copy of a
// file is still being written when the pass looks: the pass waits for it to settle, within its deadline.

const API_KEY = "irs_live_e2e_key_0123456789";
/** Far longer than the deadline: the wait for the copy to settle must end by the deadline, not by it. */
const SETTLE_MS = 120_000;
const DEADLINE_MS = 1_000;
/** Generous: the deadline, then the submission worker's close; a pass that waits out SETTLE_MS is far past it. */
const LIMIT_MS = DEADLINE_MS + 15_000;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 9 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

/** A source whose one file grew on the server after it was taken and is still being written. */
function stillWriting(): RemotePass {
  const retake = { source: "acme", file: "grow.csv", batch: "20261207T180000Z-0a0b0c", size: 120 };
  return {
    take: () => Promise.resolve(new Map()),
    finish: () => Promise.resolve({ taken: new Map(), again: [retake] }),
    failures: () => new Map(),
    held: () => Promise.resolve(new Map()),
  };
}

/** A source whose server never answers: its take ends only with the pass's signal, having taken nothing. */
function silentSource(): RemotePass {
  return {
    take: (signal) =>
      new Promise((resolve) =>
        signal?.addEventListener(
          "abort",
          () => {
            resolve(new Map());
          },
          { once: true },
        ),
      ),
    finish: () => Promise.resolve({ taken: new Map(), again: [] }),
    failures: () => new Map(),
    held: () => Promise.resolve(new Map()),
  };
}

describe("a batch waiting for its file", () => {
  it(
    "when a server copy taken again is still being written at the deadline, then the pass ends by its deadline naming it, not after SETTLE_MS",
    async () => {
      const drop = await tempDropDir();
      cleanups.push(drop.cleanup);
      const logger = silentLogger();
      const config = testConfig({
        apiUrl: sim.url,
        apiKey: API_KEY,
        prefix: `pass-waits-${randomUUID()}`,
        env: { DROP_DIR: drop.dir, SETTLE_MS: String(SETTLE_MS) },
      });
      const ctx = await openContext(config, { dropFolder: true, logger });
      cleanups.push(() => ctx.close());
      const started = Date.now();

      const outcome = await nightlyPass(
        { ...ctx, config, logger, remote: stillWriting() },
        { signal: new AbortController().signal, deadline: started + DEADLINE_MS, pollMs: 50 },
      );

      expect(Date.now() - started).toBeLessThan(LIMIT_MS);
      expect(outcome).toMatchObject({
        kind: "finished",
        growing: [{ file: "grow.csv", source: "acme", readiness: "writing" }],
      });
    },
    2 * SETTLE_MS,
  );

  it("when an SFTP source answers nothing until the deadline, then the drop folder's batch, sent meanwhile, is reported and archived at the deadline", async () => {
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const file = join(drop.dir, "local.csv");
    await writeFile(file, [CSV_HEADER, csvRow("SL-1"), csvRow("SL-2"), ""].join("\n"));
    const written = new Date(Date.now() - 60_000); // settled
    await utimes(file, written, written);
    const logger = silentLogger();
    const config = testConfig({
      apiUrl: sim.url,
      apiKey: API_KEY,
      prefix: `pass-silent-source-${randomUUID()}`,
      env: { DROP_DIR: drop.dir },
    });
    const ctx = await openContext(config, { dropFolder: true, logger });
    cleanups.push(() => ctx.close());

    const outcome = await nightlyPass(
      { ...ctx, config, logger, remote: silentSource() },
      { signal: new AbortController().signal, deadline: Date.now() + 3 * DEADLINE_MS, pollMs: 50 },
    );

    expect(outcome).toMatchObject({ kind: "finished", batches: [{ file: "local.csv", state: "reported" }] });
  });
});
