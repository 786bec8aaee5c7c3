import { cleanupsAfterEach } from "./cleanups.js";
import { createRedis } from "../../src/queue/connection.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { startTestWorker, type testConfig } from "./engine.js";

type Config = ReturnType<typeof testConfig>;

/**
 * A simulator, workers and results-store readers for submission tests, each closed after every test of
 * the file that calls this (at its top level).
 */
export function submissionFixture(apiKey: string) {
  const cleanups = cleanupsAfterEach();

  async function simulator(options: Parameters<typeof startSimulator>[0] = {}): Promise<SimulatorHandle> {
    const sim = await startSimulator({ apiKey, seed: 7, ...options });
    cleanups.push(() => sim.close());
    return sim;
  }

  async function worker(config: Config, hooks: Parameters<typeof startTestWorker>[1] = {}) {
    const w = await startTestWorker(config, hooks);
    cleanups.push(() => w.service.close(1000));
    return w;
  }

  function storeOf(config: Config): RedisLedger {
    const redis = createRedis(config.redisUrl, "producer");
    cleanups.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    return new RedisLedger(redis, config.queuePrefix);
  }

  return { cleanups, simulator, worker, storeOf };
}
