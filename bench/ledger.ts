// npm run bench:ledger — what the ledger (the results store's idempotency keys, batches and indexes, plus
// BullMQ's queue) costs in Redis per invoice after one `invoice-relay run` of LEDGER_INVOICES (100,000)
// valid invoices from one CSV drop file, on a private redis-server with AOF.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "../src/dev/redis-server.js";
import { createRedis } from "../src/queue/connection.js";
import { startSimulator } from "../src/simulator/index.js";
import { describeExit, spawnEntry } from "./chaos/processes.js";
import { writeCsv } from "./generate.js";
import {
  commandCalls,
  footprint,
  keyFamilies,
  memoryFigures,
  type FamilyFootprint,
} from "./ledger-footprint.js";
import { resetPrivateRedis } from "./support.js";

const N = Number(process.env["LEDGER_INVOICES"] ?? 100_000);
const TIMEOUT_MS = Number(process.env["LEDGER_TIMEOUT_S"] ?? 1800) * 1000;
const SAMPLE_KEYS = 1000;
const API_KEY = "irs_live_bench_key_000000";

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const perInvoice = (n: number) => n / N;
const twoDecimals = (n: number) => Math.round(n * 100) / 100;

function printFamilies(rows: readonly FamilyFootprint[], grown: number, table: number, prefix: string): void {
  const b = (bytes: number) => `${Math.round(perInvoice(bytes))} B/invoice`;
  console.log(
    "keys by family: MEMORY USAGE (SAMPLES 0, with the key's keyspace-table entry) of up to 1,000 random keys × keys:",
  );
  let sampled = 0;
  for (const row of rows) {
    sampled += row.meanBytes * row.keys;
    const label = row.family === undefined ? "other" : `${row.family.name} (${row.family.pattern})`;
    console.log(
      `  ${label.padEnd(40)} ${String(row.keys).padStart(8)} keys = ${perInvoice(row.keys).toFixed(2)}/invoice; ` +
        `${Math.round(row.meanBytes)} B/key (${row.sampled} sampled) = ${b(row.meanBytes * row.keys)}` +
        (row.family === undefined ? "" : `; ${row.family.holds}`),
    );
    if (row.names.length > 0)
      console.log(`    other keys: ${row.names.map((n) => n.replace(prefix, "{prefix}")).join(", ")}`);
  }
  console.log(
    `  keyspace table (MEMORY STATS overhead.hashtable.main, an entry per key and the buckets): ${b(table)}; ` +
      `families ${b(sampled)} + table of the ${b(grown)} used_memory grew by; the rest is cached scripts, ` +
      "Redis's own buffers and allocator slack",
  );
}

const redis = await RedisServer.start({ aof: true });
const sim = await startSimulator({ apiKey: API_KEY, seed: 1 });
const admin = createRedis(redis.url, "producer", "bench-ledger");
const dropDir = await mkdtemp(join(tmpdir(), "invoice-relay-ledger-"));
try {
  // Hash-tagged, as a deployment on Redis Cluster must be; the server is private, so no other run shares it.
  const prefix = "{invoice-relay}";
  await writeCsv(join(dropDir, "invoices.csv"), N);
  const version = (/^redis_version:(\S+)/m.exec(await admin.info("server")) ?? [])[1] ?? "?";

  await resetPrivateRedis(admin);
  const before = await memoryFigures(admin);
  const keysBefore = await admin.dbsize();
  // The last command before the run, so that every call counted after it but this one is the run's.
  await admin.config("RESETSTAT");

  const began = performance.now();
  const env = {
    REDIS_URL: redis.url,
    INVOICE_API_URL: sim.url,
    INVOICE_API_KEY: API_KEY,
    QUEUE_PREFIX: prefix,
    DROP_DIR: dropDir,
    SETTLE_MS: "0",
    LOG_LEVEL: "warn",
  };
  const run = spawnEntry("run", "workers/cli.js", ["run"], { ...env, RESULTS_RETENTION: "7d" });
  const timer = setTimeout(() => run.child.kill("SIGKILL"), TIMEOUT_MS);
  const exit = await run.exited.finally(() => {
    clearTimeout(timer);
  });
  const seconds = (performance.now() - began) / 1000;
  if (exit.code !== 0) {
    throw new Error(
      `invoice-relay run ended with ${describeExit(exit)} after ${seconds.toFixed(0)} s:\n${run.tail()}`,
    );
  }

  // Read first, before this process issues any other command: CONFIG RESETSTAT itself counts once.
  const calls = await commandCalls(admin);
  const after = await memoryFigures(admin);
  const keysAfter = await admin.dbsize();
  const rows = await footprint(admin, keyFamilies(prefix), SAMPLE_KEYS, false);
  // Retention: a second `run` (nothing to do) with a retention the batch has passed sweeps it at start.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const sweep = spawnEntry("sweep", "workers/cli.js", ["run"], { ...env, RESULTS_RETENTION: "1s" });
  const swept = await sweep.exited;
  if (swept.code !== 0)
    throw new Error(`the sweeping run ended with ${describeExit(swept)}:\n${sweep.tail()}`);
  // Redis shrinks its emptied keyspace table in its own cron (10 times a second): let it run once.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const expired = await memoryFigures(admin);
  // What the deployment's keys still hold, apart from what Redis keeps for itself after heavy use.
  const leftKeys = await footprint(admin, keyFamilies(prefix), SAMPLE_KEYS, false);
  const leftKeyBytes = leftKeys.reduce((n, f) => n + f.meanBytes * f.keys, 0);
  const keysExpired = await admin.dbsize();

  const totalCalls = [...calls.values()].reduce((a, b) => a + b, 0) - 1;
  const bytes = after.used - before.used;
  const keys = keysAfter - keysBefore;
  const top = [...calls.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(
    `invoices: ${N} valid, one CSV drop file; invoice-relay run exit 0 in ${seconds.toFixed(1)} s; ` +
      `Redis ${version}, private, appendonly yes, appendfsync everysec; QUEUE_PREFIX ${prefix}`,
  );
  console.log(
    `used_memory: ${mb(before.used)} before, ${mb(after.used)} after: +${mb(bytes)} = ${Math.round(perInvoice(bytes))} B/invoice ` +
      `(keyspace table +${mb(after.keyspaceTable - before.keyspaceTable)} of it)`,
  );
  console.log(
    `keys: ${keysBefore} before, ${keysAfter} after: +${keys} = ${perInvoice(keys).toFixed(2)}/invoice`,
  );
  console.log(
    `Redis calls (INFO commandstats, commands inside scripts included): ${totalCalls} = ${perInvoice(totalCalls).toFixed(2)}/invoice; ` +
      `most: ${top.map(([name, n]) => `${name} ${perInvoice(n).toFixed(2)}`).join(", ")} per invoice`,
  );
  printFamilies(rows, bytes, after.keyspaceTable - before.keyspaceTable, prefix);
  const left = expired.used - before.used;
  console.log(
    `after the retention passed and a second run swept: used_memory ${mb(expired.used)}: ${Math.round(perInvoice(left))} B/invoice ` +
      `left over the empty Redis; keys ${keysExpired} holding ${Math.round(leftKeyBytes)} B = ` +
      `${Math.round(perInvoice(leftKeyBytes))} B/invoice (BullMQ's capped event stream and meta, the status counts); ` +
      "the rest is Redis's own (buffers and tables it keeps after heavy use, there with every key deleted too)",
  );
  console.log(
    JSON.stringify({
      invoices: N,
      redis_bytes_per_invoice: Math.round(perInvoice(bytes)),
      redis_keys_per_invoice: twoDecimals(perInvoice(keys)),
      bytes_after_expiry_per_invoice: Math.max(0, Math.round(perInvoice(left))),
      redis_calls_per_invoice: twoDecimals(perInvoice(totalCalls)),
    }),
  );
} finally {
  await admin.quit();
  await sim.close();
  await redis.dispose();
  await rm(dropDir, { recursive: true, force: true });
}
