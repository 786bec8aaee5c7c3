// npm run demo — a new user's first command: a local simulator with some faults, a Redis, the bundled
// sample files in a fresh drop folder, and one `invoice-relay run` exactly as an operator would start it.
import { spawn } from "node:child_process";
import { cp, mkdir, readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_API_KEY, startSimulator } from "../simulator/index.js";
import { RedisServer } from "./redis-server.js";

const root = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const samples = join(root, "samples");
const demoDir = resolve(process.env["DEMO_DIR"] ?? join(root, ".demo"));
const dropDir = join(demoDir, "drop");
const say = (text: string) => process.stdout.write(`${text}\n`);

async function main(): Promise<number> {
  await rm(dropDir, { recursive: true, force: true });
  await mkdir(dropDir, { recursive: true });
  const files = (await readdir(samples)).filter((n) => /\.(csv|json|ndjson|jsonl)$/.test(n));
  for (const name of files) await cp(join(samples, name), join(dropDir, name));
  // The vendor-shaped samples are read through their source profiles: DROP_DIR/sources.yaml.
  await cp(join(samples, "sources.yaml"), join(dropDir, "sources.yaml"));

  const redis = process.env["REDIS_URL"] === undefined ? await RedisServer.start({ aof: true }) : undefined;
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
  say(`invoice-relay demo`);
  say(`  Redis:      ${redis === undefined ? redisUrl : `private redis-server with AOF at ${redisUrl}`}`);
  say(`  service:    simulator at ${sim.url} (10% 503, 5% 429, 5% lost responses, 0-30 ms latency)`);
  say(`  drop folder ${dropDir}: ${files.join(", ")}, and sources.yaml (source profiles)`);
  say(`  running:    invoice-relay run --drop-dir ${dropDir}\n`);
  try {
    const code = await new Promise<number>((done) => {
      const child = spawn(
        process.execPath,
        [join(root, "dist/workers/cli.js"), "run", "--drop-dir", dropDir],
        {
          stdio: "inherit",
          env: {
            ...process.env,
            REDIS_URL: redisUrl,
            INVOICE_API_URL: sim.url,
            INVOICE_API_KEY: DEMO_API_KEY,
            QUEUE_PREFIX: `invoice-relay-demo-${Date.now()}`,
            SETTLE_MS: "0",
            BACKOFF_BASE_MS: "200",
            LOG_LEVEL: process.env["LOG_LEVEL"] ?? "warn",
          },
        },
      );
      child.on("exit", (exitCode) => {
        done(exitCode ?? 1);
      });
    });
    const stats = sim.stats();
    say(`\nrun exited with ${code}: ${meaning(code)}`);
    say(
      `the simulator saw ${stats.requests.total} requests: ${stats.faults.error} answered 503, ${stats.faults.throttle} answered 429, ` +
        `${stats.faults.lost} responses lost, ${stats.replays} idempotent replays`,
    );
    say(
      `effects: ${stats.effects.total} invoices accepted, ${stats.effects.keysWithMultipleEffects} accepted twice`,
    );
    say(`reports: ${join(dropDir, "reports")}`);
    for (const name of (await readdir(join(dropDir, "reports"))).sort()) say(`  ${name}`);
    return code === 0 || code === 2 ? 0 : 1;
  } finally {
    await sim.close();
    await redis?.dispose();
  }
}

function meaning(code: number): string {
  if (code === 0) return "every row succeeded or was a duplicate of an earlier success";
  if (code === 2)
    return "finished; some rows were rejected, failed or in conflict (the samples include bad rows on purpose)";
  return "could not finish (see the message above)";
}

process.exitCode = await main();
