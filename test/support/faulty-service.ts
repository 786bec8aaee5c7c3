import { startSimulator, type Attempt, type SimulatorHandle } from "../../src/simulator/index.js";

/**
 * The simulator as the nightly-pass tests meet it: 10 % 503s, 5 % 429s with a 1 s Retry-After, and
 * `lostRate` of answers lost after the effect; every attempt it saw, in order, in `seen`.
 */
export async function faultyService(
  apiKey: string,
  { seed, lostRate }: { readonly seed: number; readonly lostRate: number },
): Promise<{ sim: SimulatorHandle; seen: Attempt[] }> {
  const sim = await startSimulator({
    apiKey,
    seed,
    errorRate: 0.1,
    throttleRate: 0.05,
    retryAfterSeconds: 1,
    lostRate,
  });
  const seen: Attempt[] = [];
  sim.events.on("attempt", (attempt) => seen.push(attempt));
  return { sim, seen };
}
