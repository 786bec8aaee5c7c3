import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { childEnv, distPath } from "../support/processes.js";

/**
 * The documented bound (src/tracing/otel-sdk.ts, EXIT_FLUSH_MS) is 1 s; a process whose exporter left a
 * retry waiting exited 2.5–5.3 s after shutdown began. The margin covers a loaded test machine.
 */
const EXIT_WITHIN_MS = 2000;

/**
 * How long the process works before it exits: its spans' export has failed and been retried twice by
 * then (after about 1 s and 2.5 s), so a retry is under way when it shuts down, as in a night's run.
 */
const RUNNING_MS = 2000;

/**
 * A process as `run` ends: its tracing made spans, then shuts down, and nothing else holds it. It prints
 * how long after the shutdown began the process exited.
 */
const PROCESS = `
const { openSdk } = await import(${JSON.stringify(pathToFileURL(distPath("src/tracing/otel-sdk.js")).href)});
const { silentLogger } = await import(${JSON.stringify(pathToFileURL(distPath("src/log/logger.js")).href)});
const handle = openSdk({ protocol: "http/protobuf" }, { queue: "invoices", logger: silentLogger() });
for (let i = 0; i < 20; i++) handle.tracing.enqueue([{ key: "k" + i, batch: "b", line: i + 2 }]).end();
await new Promise((resolve) => setTimeout(resolve, ${RUNNING_MS}));
const began = Date.now();
process.on("exit", () => console.log(JSON.stringify({ exitedAfterMs: Date.now() - began })));
await handle.shutdown();
console.log(JSON.stringify({ shutdownMs: Date.now() - began }));
`;

function runProcess(endpoint: string) {
  const child = spawn(process.execPath, ["--input-type=module", "-e", PROCESS], {
    // Spans are exported at once, not after the default 5 s.
    env: childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "50" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise<{ code: number | null; output: string; times: Record<string, number> }>((resolve) =>
    child.once("close", (code) => {
      const times = Object.assign(
        {},
        ...output
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as Record<string, number>),
      ) as Record<string, number>;
      resolve({ code, output, times });
    }),
  );
}

describe("a trace collector that is down when the process exits", () => {
  it("when the collector's port is closed, then shutting tracing down ends the process within the bound, no export retry holding it", async () => {
    const result = await runProcess(`http://127.0.0.1:${await freePort()}`);

    expect(result.code, result.output).toBe(0);
    expect(result.times["shutdownMs"], result.output).toBeLessThan(EXIT_WITHIN_MS);
    expect(result.times["exitedAfterMs"], result.output).toBeLessThan(EXIT_WITHIN_MS);
  });
});
