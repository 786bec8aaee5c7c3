import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator } from "../../src/simulator/index.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { tempDropDir } from "../support/drop.js";
import { finish } from "../support/cli-run.js";
import { spawnNode, until } from "../support/processes.js";

const API_KEY = "irs_live_stop_key_0123456789";
const GRACE_MS = 2000;
/** The grace, and room for a busy machine to log and close; far below the minutes a hung process would take. */
const EXIT_WITHIN_MS = GRACE_MS + 10_000;
const cleanups = cleanupsAfterEach();

describe("a worker stopped while Redis is away", () => {
  it("when Redis is gone as an idle worker is sent SIGINT, then it ends by itself, with nothing in hand to wait for", async () => {
    const redis = await RedisServer.start();
    const sim = await startSimulator({ apiKey: API_KEY, seed: 3 });
    cleanups.push(
      () => redis.dispose(),
      () => sim.close(),
    );
    const env = cliEnv(
      { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "stop-away" },
      { SHUTDOWN_GRACE_MS: String(GRACE_MS), LOG_LEVEL: "info" },
    );
    const worker = spawnNode("workers/cli.js", ["worker"], env);
    cleanups.push(async () => {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    });
    await until(
      () => Promise.resolve(worker.output().includes("submission worker started")),
      20_000,
      "the worker to start",
    );
    await redis.stop();
    worker.child.kill("SIGINT");
    const ended = await finish(worker, EXIT_WITHIN_MS);
    expect(ended.signal, `still running ${EXIT_WITHIN_MS} ms after SIGINT:\n${ended.output}`).toBeNull();
    expect(ended.output).toContain("submission worker stopped");
    expect(ended.code).toBe(0);
  });

  for (const command of ["worker", "start"] as const) {
    it(`when Redis goes away while a busy ${command} has invoices in hand and it is sent SIGTERM, then it ends by itself within its grace, leaving them to the next process`, async () => {
      const redis = await RedisServer.start();
      // Slow answers: requests are in flight when Redis goes.
      const sim = await startSimulator({ apiKey: API_KEY, seed: 4, latencyMs: { min: 200, max: 400 } });
      const drop = await tempDropDir();
      cleanups.push(
        () => redis.dispose(),
        () => sim.close(),
        drop.cleanup,
      );
      const rows = Array.from({ length: 400 }, (_, i) => csvRow(`BUSY-${i + 1}`));
      await writeFile(join(drop.dir, "busy.csv"), [CSV_HEADER, ...rows, ""].join("\n"));
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name: "stop-busy", dropDir: drop.dir },
        { SHUTDOWN_GRACE_MS: String(GRACE_MS), SUBMIT_CONCURRENCY: "16", LOG_LEVEL: "info" },
      );
      // `worker` is fed by an `ingest` of the file; `start` takes it from its drop folder itself.
      if (command === "worker") {
        const ingest = await finish(spawnNode("workers/cli.js", ["ingest", join(drop.dir, "busy.csv")], env));
        expect(ingest.code, ingest.output).toBe(0);
      }
      const proc = spawnNode("workers/cli.js", [command], env);
      cleanups.push(async () => {
        if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
        await proc.exited;
      });
      await until(() => Promise.resolve(sim.stats().effects.total >= 20), 30_000, "invoices to be sent");
      await redis.kill();
      proc.child.kill("SIGTERM");
      const ended = await finish(proc, EXIT_WITHIN_MS);
      expect(ended.signal, `still running ${EXIT_WITHIN_MS} ms after SIGTERM:\n${ended.output}`).toBeNull();
      expect(ended.output).not.toMatch(/Unhandled error event|triggerUncaughtException/);
      // Said in the command's log lines only: no error printed raw with its stack.
      expect(ended.output).not.toMatch(/^\s+at /m);
    }, 60_000);
  }
});
