// A simulator in its own process for benchmarks, so it does not share the measured process's event loop.
// SIM_OPTIONS, a JSON object of simulator options (src/simulator/options.ts), sets the service it plays.
import { z } from "zod";
import { simulatorOptionsSchema, startSimulator } from "../src/simulator/index.js";

const given = z.record(z.string(), z.unknown()).parse(JSON.parse(process.env["SIM_OPTIONS"] ?? "{}"));
const sim = await startSimulator(
  simulatorOptionsSchema.parse({
    seed: 1,
    ...given,
    apiKey: process.env["INVOICE_API_KEY"] ?? "irs_live_bench_key_000000",
  }),
);
process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`);
process.on("SIGTERM", () => void sim.close().then(() => process.exit(0)));
