import { Command, Option } from "commander";
import { z } from "zod";
import {
  DEFAULT_CAPACITY,
  DEFAULT_RULESET_VERSION,
  DEMO_API_KEY,
  SimulatorOptionsError,
  startSimulator,
  type Capacity,
  type Faults,
  type SimulatorHandle,
} from "../../simulator/index.js";
import { coerceError } from "../../errors/relay-error.js";
import { withScope } from "../../lifecycle/scope.js";
import { readSecretFileSync } from "../../config/secret-file.js";
import { ExitCode } from "../exit-codes.js";
import type { CommandFactory } from "../program.js";

/** The port `simulate` listens on unless told otherwise: fixed, so a demo's INVOICE_API_URL stays the same. */
const DEFAULT_SIMULATOR_PORT = 4010;

/** Where the command writes and which signals stop it: injected so tests drive it without real signals. */
export interface SimulateIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
  /** Resolves when the simulator should stop (SIGTERM or SIGINT in a real process). */
  readonly stopSignal: () => Promise<string>;
}

const number = (flag: string, check: z.ZodNumber, expectation: string) =>
  z
    .string()
    .trim()
    .refine((s) => s !== "" && Number.isFinite(Number(s)), `${flag} must be ${expectation}`)
    .transform(Number)
    .pipe(check);

const rate = (flag: string) => {
  const message = `${flag} must be a number from 0 to 1`;
  return number(flag, z.number().min(0, message).max(1, message), "a number from 0 to 1");
};

const API_KEY_FLAG_REFUSED =
  "--api-key is not accepted, because a key on the command line shows in the process list (ps); " +
  "set INVOICE_API_KEY in the environment instead";

const flagsSchema = z.object({
  port: number(
    "--port",
    z
      .number()
      .int("--port must be a whole number")
      .min(0, "--port must be 0-65535")
      .max(65_535, "--port must be 0-65535"),
    "a port number (0 picks a free one)",
  ).default(DEFAULT_SIMULATOR_PORT),
  host: z.string().trim().min(1, "--host must not be empty").default("127.0.0.1"),
  // A key on the command line shows in the process list (ps), so the flag is refused; the message
  // is fixed text, so the value given never reaches the output.
  apiKey: z.undefined({ error: API_KEY_FLAG_REFUSED }).optional(),
  seed: number("--seed", z.number().int("--seed must be a whole number"), "a whole number").default(1),
  errorRate: rate("--error-rate").default(0),
  throttleRate: rate("--throttle-rate").default(0),
  lostRate: rate("--lost-rate").default(0),
  retryAfter: number(
    "--retry-after",
    z.number().int("--retry-after must be whole seconds").min(0, "--retry-after must be 0 or more"),
    "whole seconds",
  ).default(1),
  latency: z
    .string()
    .trim()
    .regex(/^\d+(?:-\d+)?$/, "--latency must be MIN-MAX in milliseconds, e.g. 20-80, or one number")
    .transform((s) => {
      const [min = "0", max = min] = s.split("-");
      return { min: Number(min), max: Number(max) };
    })
    .refine((l) => l.min <= l.max, "--latency MIN must not exceed MAX")
    .default({ min: 0, max: 0 }),
  rulesetVersion: z
    .string()
    .trim()
    .min(1, "--ruleset-version must not be empty")
    .default(DEFAULT_RULESET_VERSION),
  capacity: number(
    "--capacity",
    z.number().min(0, "--capacity must be 0 or more requests per second"),
    "requests per second",
  ).optional(),
  burst: number(
    "--burst",
    z.number().int("--burst must be a whole number").min(1, "--burst must be 1 or more"),
    "a whole number",
  ).optional(),
  maxInFlight: number(
    "--max-in-flight",
    z.number().int("--max-in-flight must be a whole number").min(1, "--max-in-flight must be 1 or more"),
    "a whole number",
  ).optional(),
  latencyAtCapacity: number(
    "--latency-at-capacity",
    z
      .number()
      .int("--latency-at-capacity must be whole milliseconds")
      .min(0, "--latency-at-capacity must be 0 or more"),
    "whole milliseconds",
  ).optional(),
});

/** The capacity flags as the simulator's option: none of them given, no limit. */
function capacityOf(f: z.infer<typeof flagsSchema>): Capacity | null {
  if (f.capacity === undefined) return null;
  return {
    ratePerSec: f.capacity,
    burst: f.burst ?? Math.max(1, Math.ceil(f.capacity / 10)),
    maxInFlight: f.maxInFlight ?? DEFAULT_CAPACITY.maxInFlight,
    latencyAtCapacityMs: f.latencyAtCapacity ?? DEFAULT_CAPACITY.latencyAtCapacityMs,
  };
}

/** `invoice-relay simulate`, with the process's streams and signals. */
export const simulateCommand: CommandFactory = () =>
  createSimulateCommand({
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    stopSignal: processSignal,
  });

export function createSimulateCommand(io: SimulateIo): Command {
  return new Command("simulate")
    .description(
      "A local invoice routing service that follows the spec, for demos, tests and benchmarks. " +
        `The one accepted bearer key is env INVOICE_API_KEY, else ${DEMO_API_KEY}. ` +
        "Control routes under /__sim/ (stats, requests?key=, faults, reset) need no key: bind it to loopback only.",
    )
    .option("--port <n>", `port to listen on; 0 picks a free one (default ${DEFAULT_SIMULATOR_PORT})`)
    .option("--host <host>", "address to bind (default 127.0.0.1)")
    .addOption(refusedApiKeyOption())
    .option("--seed <n>", "seed of the fault and latency draws (default 1)")
    .option("--error-rate <r>", "share of requests answered 503, 0-1 (default 0)")
    .option("--throttle-rate <r>", "share of requests answered 429 with Retry-After, 0-1 (default 0)")
    .option(
      "--retry-after <s>",
      "Retry-After seconds on the injected 429s (default 1; the 503s of --error-rate are an outage and carry none)",
    )
    .option(
      "--lost-rate <r>",
      "share of requests committed but never answered (connection dropped), 0-1 (default 0)",
    )
    .option("--latency <min-max>", "delay before answering, uniform in milliseconds, e.g. 20-80 (default 0)")
    .option("--ruleset-version <v>", `ruleset version in the answers (default ${DEFAULT_RULESET_VERSION})`)
    .option(
      "--capacity <n>",
      "requests per second the service admits (a token bucket); beyond it 429 with Retry-After (default: no limit)",
    )
    .option("--burst <n>", "requests the bucket holds (default: a tenth of a second of --capacity)")
    .option(
      "--max-in-flight <n>",
      `requests in flight admitted at once (default ${DEFAULT_CAPACITY.maxInFlight})`,
    )
    .option("--latency-at-capacity <ms>", "latency added as the bucket empties (default 0)")
    .action(async (options: Record<string, unknown>) => {
      process.exitCode = await runSimulate(options, io);
    });
}

/**
 * `--api-key`, parsed but hidden, only so that passing it gets API_KEY_FLAG_REFUSED rather than
 * commander's unknown-option error, which repeats `--api-key=VALUE` whole.
 */
function refusedApiKeyOption(): Option {
  return new Option("--api-key [key]").hideHelp();
}

async function runSimulate(options: Record<string, unknown>, io: SimulateIo): Promise<number> {
  const flags = flagsSchema.safeParse(options);
  if (!flags.success) {
    for (const issue of flags.error.issues) io.stderr.write(`invoice-relay simulate: ${issue.message}\n`);
    return ExitCode.CouldNotFinish;
  }
  const f = flags.data;
  const key = simulatorKey(io.env);
  if (!key.ok) {
    io.stderr.write(`invoice-relay simulate: ${key.problem}\n`);
    return ExitCode.CouldNotFinish;
  }
  const { apiKey, keySource } = key;
  const signal = await withScope(
    (error) => {
      io.stderr.write(`invoice-relay simulate: while stopping: ${coerceError(error).message}\n`);
    },
    async (scope) => {
      let sim: SimulatorHandle;
      try {
        sim = await startSimulator({
          host: f.host,
          port: f.port,
          apiKey,
          seed: f.seed,
          errorRate: f.errorRate,
          throttleRate: f.throttleRate,
          lostRate: f.lostRate,
          retryAfterSeconds: f.retryAfter,
          latencyMs: f.latency,
          rulesetVersion: f.rulesetVersion,
          capacity: capacityOf(f),
        });
      } catch (error) {
        io.stderr.write(`invoice-relay simulate: ${startFailure(error, f.host, f.port)}\n`);
        return undefined;
      }
      scope.defer(() => sim.close());
      io.stdout.write(`invoice routing simulator listening on ${sim.url}\n`);
      io.stderr.write(`${describeFaults(sim.faults(), f.seed, f.rulesetVersion)}; api key: ${keySource}\n`);
      io.stderr.write(`${describeCapacity(sim.capacity())}\n`);
      return io.stopSignal();
    },
  );
  if (signal === undefined) return ExitCode.CouldNotFinish;
  io.stderr.write(`invoice-relay simulate: ${signal}: stopped\n`);
  return ExitCode.Ok;
}

/** The settings in one line, never the key. */
function describeFaults(faults: Faults, seed: number, rulesetVersion: string): string {
  const { min, max } = faults.latencyMs;
  return (
    `faults: error-rate=${faults.errorRate} throttle-rate=${faults.throttleRate} lost-rate=${faults.lostRate} ` +
    `retry-after=${faults.retryAfterSeconds}s latency=${min}-${max}ms seed=${seed} ruleset=${rulesetVersion}`
  );
}

function describeCapacity(capacity: Capacity | null): string {
  if (capacity === null) return "capacity: no limit (change it at POST /__sim/capacity)";
  return (
    `capacity: ${capacity.ratePerSec}/s burst=${capacity.burst} max-in-flight=${capacity.maxInFlight} ` +
    `latency-at-capacity=${capacity.latencyAtCapacityMs}ms (change it at POST /__sim/capacity)`
  );
}

function startFailure(error: unknown, host: string, port: number): string {
  if (error instanceof SimulatorOptionsError) return error.message;
  const code = error instanceof Error && "code" in error ? error.code : undefined;
  if (code === "EADDRINUSE") return `port ${port} on ${host} is in use; pass --port with another port (or 0)`;
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")
    return `cannot bind to ${host}; pass --host 127.0.0.1`;
  return error instanceof Error ? error.message : String(error);
}

function processSignal(): Promise<string> {
  return withScope(
    () => undefined,
    (scope) =>
      new Promise<string>((resolve) => {
        scope.onSignals(["SIGTERM", "SIGINT"], resolve);
      }),
  );
}

/** The one key the simulator accepts: INVOICE_API_KEY, the file INVOICE_API_KEY_FILE names, else the demo key. */
function simulatorKey(
  env: NodeJS.ProcessEnv,
): { ok: true; apiKey: string; keySource: string } | { ok: false; problem: string } {
  const inline = env["INVOICE_API_KEY"]?.trim() ?? "";
  const path = env["INVOICE_API_KEY_FILE"]?.trim() ?? "";
  if (inline !== "" && path !== "")
    return { ok: false, problem: "INVOICE_API_KEY and INVOICE_API_KEY_FILE are both set: set only one" };
  if (inline !== "") return { ok: true, apiKey: inline, keySource: "INVOICE_API_KEY" };
  if (path === "") return { ok: true, apiKey: DEMO_API_KEY, keySource: "demo key" };
  const read = readSecretFileSync(path, "INVOICE_API_KEY_FILE");
  return read.ok
    ? { ok: true, apiKey: read.value, keySource: "INVOICE_API_KEY_FILE" }
    : { ok: false, problem: `INVOICE_API_KEY_FILE ${path} ${read.problem}` };
}
