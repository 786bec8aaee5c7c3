import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INGEST_WINDOW_MIN } from "../../src/config/setting-values.js";
import { IngestInterruptedError } from "../../src/ingest/errors/ingest-interrupted-error.js";
import { INGEST_CHUNK_ROWS, INGEST_CHUNKS_IN_FLIGHT } from "../../src/ingest/ingest-file.js";
import { IngestWindow, type WindowSettings } from "../../src/ingest/ingest-window.js";
import { createLogger, silentLogger } from "../../src/log/logger.js";

const FAST = { pollMs: 1, stallNoticeMs: 60_000 };
const context = { file: "big.csv", logger: silentLogger() };

/** Every pending promise step has run (a take that can go has gone). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("the ingest window", () => {
  it("when the smallest window is set, then it still holds every chunk ingest keeps under way", () => {
    expect(INGEST_CHUNK_ROWS * INGEST_CHUNKS_IN_FLIGHT).toBeLessThanOrEqual(INGEST_WINDOW_MIN);
  });

  it("when the queue holds the window, then a chunk waits until workers have freed room for it", async () => {
    let queued = 900;
    const window = new IngestWindow({ jobs: 1000 }, () => Promise.resolve(queued), context, FAST);
    let went = false;
    const taking = window.take(250).then(() => (went = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(went).toBe(false);
    queued = 750;
    await taking;
    expect(went).toBe(true);
  });

  it("when chunks are under way, then they count on top of the queue until done, and what they did not add comes back", async () => {
    let counted = 0;
    const window = new IngestWindow(
      { jobs: 1000 },
      () => {
        counted++;
        return Promise.resolve(0);
      },
      context,
      FAST,
    );
    for (let i = 0; i < 4; i++) await window.take(250);
    expect(counted).toBe(1);
    let fifth = false;
    const taking = window.take(250).then(() => (fifth = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fifth).toBe(false); // the queue reads 0, but 1000 rows are under way
    window.done(250, 0); // a resumed chunk whose rows were all final: nothing added
    await taking;
    expect(fifth).toBe(true);
  });

  it("when the stop signal comes during a wait, then take throws IngestInterruptedError at once", async () => {
    const stop = new AbortController();
    const settings: WindowSettings = { jobs: 1000, until: stop.signal };
    const window = new IngestWindow(settings, () => Promise.resolve(1000), context, {
      pollMs: 60_000,
      stallNoticeMs: 60_000,
    });
    const taking = window.take(250);
    await settled();
    stop.abort();
    await expect(taking).rejects.toBeInstanceOf(IngestInterruptedError);
  });

  it("when no worker will take an invoice (the API key refused), then a wait for room ends with IngestInterruptedError", async () => {
    let refused = false;
    const window = new IngestWindow(
      { jobs: 1000, held: () => Promise.resolve(refused) },
      () => Promise.resolve(1000),
      context,
      FAST,
    );
    const taking = window.take(250);
    await new Promise((resolve) => setTimeout(resolve, 20));
    refused = true;
    await expect(taking).rejects.toBeInstanceOf(IngestInterruptedError);
  });

  it("when it first waits, then it says so once, and warns once when no job has finished for the stall time", async () => {
    const lines: string[] = [];
    const logger = createLogger({
      format: "json",
      destination: { write: (line: string) => lines.push(line) },
    });
    let queued = 1000;
    const waits: number[] = [];
    const window = new IngestWindow(
      { jobs: 1000, onWait: (wait) => waits.push(wait.unfinished) },
      () => Promise.resolve(queued),
      { file: "big.csv", logger },
      { pollMs: 1, stallNoticeMs: 30 },
    );
    const taking = window.take(250);
    await new Promise((resolve) => setTimeout(resolve, 80));
    queued = 0;
    await taking;
    expect(waits).toEqual([1000]);
    const messages = lines.map((l) => (JSON.parse(l) as { level: number; msg: string }).msg);
    expect(messages.filter((m) => m.includes("as INGEST_WINDOW allows"))).toHaveLength(1);
    expect(messages.filter((m) => m.includes("is a worker running"))).toHaveLength(1);
  });

  it("when chunks are taken, added and finished in any order, then the queue never holds more than the window", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1000, max: 3000 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 250 }), fc.integer({ min: 0, max: 100 })), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 20 }),
        async (jobs, chunks, finishes) => {
          let queued = 0;
          let most = 0;
          const window = new IngestWindow({ jobs }, () => Promise.resolve(queued), context, FAST);
          // workers finish jobs as the chunks go on; enough in the end for every chunk to find room
          let turn = 0;
          const workers = setInterval(() => {
            queued = Math.max(0, queued - (finishes[turn++ % finishes.length] ?? 0) - 1);
          }, 1);
          try {
            const underWay: Promise<void>[] = [];
            for (const [rows, keptPercent] of chunks) {
              await window.take(rows);
              // a chunk adds its jobs a little later, some of them only (rows already final or queued)
              underWay.push(
                settled().then(() => {
                  const added = Math.floor((rows * keptPercent) / 100);
                  queued += added;
                  most = Math.max(most, queued);
                  window.done(rows, added);
                }),
              );
              if (underWay.length >= 4) await underWay.shift();
            }
            await Promise.all(underWay);
          } finally {
            clearInterval(workers);
          }
          expect(most).toBeLessThanOrEqual(jobs);
        },
      ),
      { numRuns: 40 },
    );
  });
});
