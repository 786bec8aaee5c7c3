import { afterEach } from "vitest";
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from "../../../src/simulator/index.js";

/**
 * For a test file: a `start` that runs a simulator on loopback, every one of them closed after the test
 * that started it.
 */
export function simulatorsPerTest(): (options?: SimulatorOptions) => Promise<SimulatorHandle> {
  const started: SimulatorHandle[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
  });
  return async (options = {}) => {
    const sim = await startSimulator(options);
    started.push(sim);
    return sim;
  };
}
