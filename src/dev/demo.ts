// npm run demo — a new user's first command: a local simulator with some faults, a Redis, the bundled
// sample files in a fresh drop folder (or, with --sftp, on a private SFTP server), and one
// `invoice-relay run` exactly as an operator would start it.
import { spawn } from "node:child_process";
import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { coerceError } from "../errors/relay-error.js";
import { withScope } from "../lifecycle/scope.js";
import { DEMO_API_KEY, startSimulator } from "../simulator/index.js";
import { startDemoSftp } from "./demo-sftp.js";
import { DevServerError } from "./errors/dev-server-error.js";
import { RedisServer } from "./redis-server.js";

const root = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const samples = join(root, "samples");
const demoDir = resolve(process.env["DEMO_DIR"] ?? join(root, ".demo"));
const dropDir = join(demoDir, "drop");
const say = (text: string) => process.stdout.write(`${text}\n`);
/**
 * The console stays up at the end on a terminal (or with --console), so a newcomer sees the batches in a
 * browser; --no-console, CI or a pipe end the demo with the summary.
 */
const args = process.argv.slice(2);
const keepConsole =
  args.includes("--console") ||
  (!args.includes("--no-console") && process.stdout.isTTY && process.env["CI"] === undefined);

/** With --sftp the files wait on a private SFTP server, and the run pulls them from it (demo-sftp.ts). */
const fromSftp = args.includes("--sftp");

async function main(): Promise<number> {
  await rm(dropDir, { recursive: true, force: true });
  await mkdir(dropDir, { recursive: true });
  const files = (await readdir(samples)).filter((n) => /\.(csv|json|ndjson|jsonl)$/.test(n));

  return withScope(
    (error) => {
      process.stderr.write(`demo: while stopping: ${coerceError(error).message}\n`);
    },
    async (scope) => {
      const sftp = fromSftp ? await startDemoSftp(scope, samples, files) : undefined;
      if (sftp === undefined) for (const name of files) await cp(join(samples, name), join(dropDir, name));
      // The vendor-shaped samples are read through their source profiles: DROP_DIR/sources.yaml, which
      // also names the SFTP source.
      const profiles = await readFile(join(samples, "sources.yaml"), "utf8");
      await writeFile(
        join(dropDir, "sources.yaml"),
        sftp === undefined ? profiles : `${profiles}\n${sftp.sourcesYaml}`,
      );
      const redis =
        process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
      scope.defer(() => redis?.dispose());
      const redisUrl = process.env["REDIS_URL"] ?? redis?.url ?? "";
      const sim = await startSimulator({
        apiKey: DEMO_API_KEY,
        seed: 2026,
        errorRate: 0.1,
        throttleRate: 0.05,
        retryAfterSeconds: 1,
        lostRate: 0.05,
        latencyMs: { min: 0, max: 30 },
      });
      scope.defer(() => sim.close());
      say(`invoice-relay demo`);
      say(`  Redis:      ${redis === undefined ? redisUrl : `private redis-server with AOF at ${redisUrl}`}`);
      say(`  service:    simulator at ${sim.url} (10% 503, 5% 429, 5% lost responses, 0-30 ms latency)`);
      if (sftp === undefined)
        say(`  drop folder ${dropDir}: ${files.join(", ")}, and sources.yaml (source profiles)`);
      else {
        say(`  files:      ${files.join(", ")}`);
        say(`              waiting on the ${sftp.where}`);
        say(`  drop folder ${dropDir}: sources.yaml (source profiles and the SFTP source)`);
      }
      // What the samples do on purpose (samples/README.md), so that none of it reads as a fault.
      say(
        "  expected:   8 rows rejected, and a warning of an unknown field, both on purpose (samples/README.md)",
      );
      say(`  running:    invoice-relay run --drop-dir ${dropDir}\n`);
      const env = {
        ...process.env,
        REDIS_URL: redisUrl,
        INVOICE_API_URL: sim.url,
        INVOICE_API_KEY: DEMO_API_KEY,
        QUEUE_PREFIX: `invoice-relay-demo-${Date.now()}`,
        SETTLE_MS: "0",
        BACKOFF_BASE_MS: "200",
        LOG_LEVEL: process.env["LOG_LEVEL"] ?? "warn",
        // Read by a person even through a pipe: warnings as words, not JSON lines.
        LOG_FORMAT: process.env["LOG_FORMAT"] ?? "pretty",
      };
      const code = await cli(["run", "--drop-dir", dropDir], env);
      const stats = sim.stats();
      say(`\nrun exited with ${code}: ${meaning(code)}`);
      say(
        `the simulator saw ${stats.requests.total} requests: ${stats.faults.error} answered 503 and ` +
          `${stats.faults.throttle} answered 429 by its random faults, ${stats.faults.lost} responses lost, ` +
          `${stats.replays} idempotent replays`,
      );
      say(
        `effects: ${stats.effects.total} invoices accepted, ${stats.effects.keysWithMultipleEffects} accepted twice`,
      );
      say(`reports: ${join(dropDir, "reports")}`);
      for (const name of (await readdir(join(dropDir, "reports"))).sort()) say(`  ${name}`);
      if (sftp !== undefined) {
        say("on the SFTP server: the files archived, each batch's results put back in reports/");
        for (const line of await sftp.remoteTree()) say(`  ${line}`);
      }
      if (keepConsole) await serveConsole(env);
      else say("\nto see the batches in a browser: npm run demo -- --console");
      return code === 0 || code === 2 ? 0 : 1;
    },
  );
}

/** Runs the built CLI with the demo's settings; resolves with its exit code. */
function cli(
  cliArgs: readonly string[],
  env: NodeJS.ProcessEnv,
  forward: readonly NodeJS.Signals[] = [],
): Promise<number> {
  return withScope(
    () => undefined,
    (scope) =>
      new Promise<number>((done) => {
        const child = spawn(process.execPath, [join(root, "dist/workers/cli.js"), ...cliArgs], {
          stdio: "inherit",
          env,
        });
        // A signal the demo gets goes on to the child (a Ctrl-C reaches both already); the demo ends with it.
        scope.onSignals(forward, (signal) => {
          child.kill(signal);
        });
        child.on("exit", (exitCode) => {
          done(exitCode ?? 1);
        });
      }),
  );
}

/**
 * `invoice-relay console` over the demo's Redis until Ctrl-C, on HTTP_ADDR (default 127.0.0.1:9464, or
 * a free port when that one is taken).
 */
async function serveConsole(env: NodeJS.ProcessEnv): Promise<void> {
  const httpAddr = process.env["HTTP_ADDR"] ?? ((await portFree(9464)) ? "127.0.0.1:9464" : "127.0.0.1:0");
  say("\nthe web console shows the batches, their rows and the queue; Ctrl-C stops it");
  await cli(["console"], { ...env, HTTP_ADDR: httpAddr, LOG_LEVEL: "warn" }, ["SIGINT", "SIGTERM"]);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => {
      resolve(false);
    });
    probe.listen(port, "127.0.0.1", () => {
      probe.close(() => {
        resolve(true);
      });
    });
  });
}

function meaning(code: number): string {
  if (code === 0) return "every row succeeded or was a duplicate of an earlier success";
  if (code === 2)
    return "finished; some rows were rejected, failed or in conflict (the samples include bad rows on purpose)";
  return "could not finish (see the message above)";
}

try {
  process.exitCode = await main();
} catch (error) {
  if (!(error instanceof DevServerError)) throw error;
  process.stderr.write(`demo: ${error.message}\n`);
  process.exitCode = 1;
}
