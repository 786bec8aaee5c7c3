import { describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator } from "../../src/simulator/index.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { finish } from "../support/cli-run.js";
import { spawnNode, until } from "../support/processes.js";

const API_KEY = "irs_live_stop_key_0123456789";
const GRACE_MS = 2000;
/** The grace, and room for a busy machine to log and close; far below the minutes a hung process would take. */
const EXIT_WITHIN_MS = GRACE_MS + 10_000;
const cleanups = cleanupsAfterEach();

describe("a worker stopped while Redis is away", () => {
  it("when Redis is gone as an idle worker is sent SIGINT, then it ends by itself, no later than its grace period", async () => {
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
    // idle, it has nothing to wait for: BullMQ's worker is closed by force with Redis away
    expect(ended.output).toContain("submission worker stopped");
    expect(ended.code).toBe(0);
  });
});
