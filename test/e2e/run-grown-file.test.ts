import { randomUUID } from "node:crypto";
import { appendFile, readdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openContext } from "../../src/cli/context.js";
import { passExitCode } from "../../src/cli/pass-exit-code.js";
import { silentLogger } from "../../src/log/logger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import {
  nightlyPass,
  type NightlyOutcome,
  type NightlyPassOptions,
} from "../../src/use-cases/nightly-pass.js";
import { tempDropDir } from "../support/drop.js";
import { testConfig } from "../support/engine.js";
import { startGate, type Gate } from "../support/gate.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

// `run`'s pass (the nightlyPass use case) with a writer that appends to its file at a chosen moment. The
// moment "after the report, before the pass's exit check" is placed with the pass's own hook.

const API_KEY = "irs_live_e2e_key_0123456789";
const HEADER = "external_id,currency,destination_country,archive_policy\n";
const rows = (tag: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `${tag}-${from + i},EUR,DE,eu-10y\n`).join("");
const longAgo = () => new Date(Date.now() - 60_000);

const cleanups = cleanupsAfterEach();

interface Bench {
  readonly sim: SimulatorHandle;
  readonly gate: Gate;
  readonly dir: string;
  readonly pass: (options?: Partial<NightlyPassOptions>, settleMs?: number) => Promise<NightlyOutcome>;
}

async function bench(): Promise<Bench> {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 7 });
  const gate = await startGate(sim.url);
  const drop = await tempDropDir();
  cleanups.push(
    () => sim.close(),
    () => gate.close(),
    drop.cleanup,
  );
  const prefix = `grown-${randomUUID()}`;
  const logger = silentLogger();
  return {
    sim,
    gate,
    dir: drop.dir,
    pass: async (options = {}, settleMs = 300) => {
      const config = testConfig({
        apiUrl: gate.url,
        apiKey: API_KEY,
        prefix,
        env: { DROP_DIR: drop.dir, SETTLE_MS: String(settleMs) },
      });
      const ctx = await openContext(config, { dropFolder: true, logger });
      return nightlyPass(
        { ...ctx, config, logger },
        { signal: new AbortController().signal, pollMs: 50, ...options },
      ).finally(() => ctx.close());
    },
  };
}

/** Resolves once, the first time it is called: the writer appends at the pass's first exit check. */
function once(act: () => Promise<void>): () => Promise<void> {
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    await act();
  };
}

async function archivedPath(dir: string): Promise<string> {
  const [name] = await readdir(join(dir, "archive"));
  return join(dir, "archive", name ?? "");
}

describe("run never exits 0 while rows of a file it archived are unsent", () => {
  it("when the writer appends after the report but before the pass's exit check, then the pass takes the whole file again in the same pass and sends the rest before it ends", async () => {
    const { sim, gate, dir, pass } = await bench();
    gate.open();
    const path = join(dir, "slow.csv");
    await writeFile(path, HEADER + rows("A", 0, 50));
    await utimes(path, longAgo(), longAgo());

    const outcome = await pass({
      beforeArchiveCheck: once(async () => appendFile(await archivedPath(dir), rows("A", 50, 100))),
    });

    expect(sim.stats().effects).toMatchObject({ total: 100, distinctKeys: 100, keysWithMultipleEffects: 0 });
    expect(passExitCode(outcome)).toBe(0);
    const batches = outcome.kind === "finished" ? outcome.batches : [];
    const first = batches.find((b) => b.replaced_by !== undefined);
    expect(first?.replaced_by).toBe(batches.find((b) => b.id !== first?.id)?.id);
  }, 300_000);

  it("when the writer appends before the pass's exit check and is still writing when the pass must end, then the pass exits 2 naming the file, and the next pass sends the rest", async () => {
    const { sim, gate, dir, pass } = await bench();
    gate.open();
    const path = join(dir, "slow.csv");
    await writeFile(path, HEADER + rows("B", 0, 50));
    const anHourAgo = new Date(Date.now() - 3_600_000);
    await utimes(path, anHourAgo, anHourAgo);

    const stop = new AbortController();
    const outcome = await pass(
      {
        signal: stop.signal,
        beforeArchiveCheck: once(async () => {
          await appendFile(await archivedPath(dir), rows("B", 50, 100));
          stop.abort(); // the pass must end (a signal, as a deadline would) while the file is not settled
        }),
      },
      // A settle time of ten minutes: the writer still counts as writing when the pass ends.
      600_000,
    );

    expect(passExitCode(outcome)).toBe(2);
    expect(outcome.kind === "finished" ? outcome.growing.map((g) => g.file) : []).toEqual(["slow.csv"]);
    expect(sim.stats().effects.total).toBe(50);

    await utimes(await archivedPath(dir), longAgo(), longAgo());
    const next = await pass();
    expect(passExitCode(next)).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 100, distinctKeys: 100, keysWithMultipleEffects: 0 });
  }, 300_000);

  it("when a pass starts while a file archived by an earlier pass has grown and is still being written, then it waits until the file has settled, takes it again and sends the rest before it exits 0", async () => {
    const { sim, gate, dir, pass } = await bench();
    gate.open();
    const path = join(dir, "slow.csv");
    await writeFile(path, HEADER + rows("C", 0, 50));
    await utimes(path, longAgo(), longAgo());
    expect(passExitCode(await pass())).toBe(0);

    await appendFile(await archivedPath(dir), rows("C", 50, 100)); // written just now: not settled
    const next = await pass({}, 1000);

    expect(passExitCode(next)).toBe(0);
    expect(sim.stats().effects).toMatchObject({ total: 100, distinctKeys: 100, keysWithMultipleEffects: 0 });
  }, 300_000);

  it("for any moment the writer pauses at (before the claim, during ingest, after the report, after the archive), every row of the final file is sent exactly once and no pass exits 0 while rows written before its end are unsent", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("before claim", "during ingest", "after report", "after archive"),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        async (pause, head, tail) => {
          const tag = `P${run++}`;
          const { sim, gate, dir, pass } = await bench();
          const path = join(dir, "slow.csv");
          await writeFile(path, HEADER + rows(tag, 0, head));
          const append = () => appendFile(path, rows(tag, head, head + tail));
          const appendArchived = async () =>
            appendFile(await archivedPath(dir), rows(tag, head, head + tail));
          let written = head;
          if (pause === "before claim") {
            await append();
            written += tail;
          }
          await utimes(path, longAgo(), longAgo());
          if (pause !== "during ingest") gate.open();

          const running = pass(
            pause === "after report"
              ? {
                  beforeArchiveCheck: once(async () => {
                    await appendArchived();
                    written += tail;
                  }),
                }
              : {},
          );
          if (pause === "during ingest") {
            await gate.firstRequest;
            const [claimed] = await readdir(join(dir, "processing"));
            await appendFile(join(dir, "processing", claimed ?? ""), rows(tag, head, head + tail));
            written += tail;
            gate.open();
          }
          const first = await running;
          // Exit 0 only with every row written before the pass ended sent.
          if (passExitCode(first) === 0) expect(sim.stats().effects.distinctExternalIds).toBe(written);

          if (pause === "after archive") {
            await appendArchived();
            await utimes(await archivedPath(dir), longAgo(), longAgo());
          }
          const last = await pass();
          expect(passExitCode(last)).toBe(0);
          expect(sim.stats().effects).toMatchObject({
            total: head + tail,
            distinctExternalIds: head + tail,
            keysWithMultipleEffects: 0,
          });
          for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
        },
      ),
      { numRuns: 6 },
    );
  }, 300_000);
});
