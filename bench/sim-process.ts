// A simulator in its own process for benchmarks, so it does not share the measured process's event loop.
import { startSimulator } from "../src/simulator/index.js";

const sim = await startSimulator({
  apiKey: process.env["INVOICE_API_KEY"] ?? "irs_live_bench_key_000000",
  seed: 1,
});
process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`);
process.on("SIGTERM", () => void sim.close().then(() => process.exit(0)));
