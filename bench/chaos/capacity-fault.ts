// The chaos run's capacity-limited service: the simulator admits CHAOS_CAPACITY requests a second (300
// unless told; 0: no limit), a tenth of a second's burst, 429 with a Retry-After beyond it, answers slowing
// as the bucket empties. The workers' learned rate must find that capacity while they are
// killed and Redis restarts, and no invoice may end failed because of a 429 (verify checks every
// invoice's final status).
import type { SimulatorOptions } from "../../src/simulator/index.js";

/** Requests per second: the night's 10,000 invoices and their retries take about a minute at it. */
const DEFAULT_CAPACITY = 300;

export function capacityFault(env: NodeJS.ProcessEnv): Pick<SimulatorOptions, "capacity"> {
  const rate = Number(env["CHAOS_CAPACITY"] ?? DEFAULT_CAPACITY);
  if (!Number.isFinite(rate) || rate < 0)
    throw new Error(
      `CHAOS_CAPACITY must be requests per second, 0 or more (got "${env["CHAOS_CAPACITY"] ?? ""}")`,
    );
  if (rate === 0) return { capacity: null };
  return {
    capacity: {
      ratePerSec: rate,
      burst: Math.max(1, Math.round(rate / 10)),
      maxInFlight: 256,
      latencyAtCapacityMs: 20,
    },
  };
}
