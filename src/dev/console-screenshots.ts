// npm run screenshots — the web console's pictures in docs/ (docs/operations.md, "Web console"): the samples,
// and a night's file of NIGHT_ROWS invoices, pass once against the simulator with faults, as in
// `npm run demo`, and a capacity it learns; headless Chromium photographs the batches page, one batch
// filtered to its rejected rows and the passes page. Needs /usr/bin/chromium (or CHROMIUM).
import { spawn } from "node:child_process";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { DEMO_API_KEY, startSimulator } from "../simulator/index.js";
import { RedisServer } from "./redis-server.js";

const root = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const docs = join(root, "docs");
const executablePath = process.env["CHROMIUM"] ?? "/usr/bin/chromium";
/** Enough invoices that the pass lasts some seconds at the simulator's capacity, so its chart has a shape. */
const NIGHT_ROWS = 2400;
/** Above the rate the fleet starts probing from (SUBMIT_RATE_START, 100/s): the chart shows it learned. */
const CAPACITY_PER_SEC = 160;

function nightFile(): string {
  const rows = Array.from(
    { length: NIGHT_ROWS },
    (_, i) => `NIGHT-2026-${String(i + 1).padStart(5, "0")},EUR,DE,eu-10y`,
  );
  return ["external_id,currency,destination_country,archive_policy", ...rows, ""].join("\n");
}

async function main(): Promise<void> {
  const drop = await mkdtemp(join(tmpdir(), "invoice-relay-screens-"));
  const samples = join(root, "samples");
  for (const name of (await readdir(samples)).filter((n) => /\.(csv|json|ndjson|yaml)$/.test(n)))
    await cp(join(samples, name), join(drop, name));
  await writeFile(join(drop, "night-2026-11-20.csv"), nightFile());
  const redis = process.env["REDIS_URL"] === undefined ? await RedisServer.start() : undefined;
  const sim = await startSimulator({
    apiKey: DEMO_API_KEY,
    seed: 2026,
    errorRate: 0.1,
    lostRate: 0.05,
    capacity: { ratePerSec: CAPACITY_PER_SEC, burst: 20, maxInFlight: 64, latencyAtCapacityMs: 0 },
  });
  const relay = spawn(process.execPath, [join(root, "dist/workers/cli.js"), "run", "--serve"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...process.env,
      REDIS_URL: process.env["REDIS_URL"] ?? redis?.url ?? "",
      INVOICE_API_URL: sim.url,
      INVOICE_API_KEY: DEMO_API_KEY,
      QUEUE_PREFIX: `invoice-relay-screens-${Date.now()}`,
      DROP_DIR: drop,
      SETTLE_MS: "0",
      BACKOFF_BASE_MS: "200",
      HTTP_ADDR: "127.0.0.1:0",
      LOG_LEVEL: "warn",
    },
  });
  const browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  try {
    const base = await servedAt(relay);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/`);
    await page.screenshot({ path: join(docs, "console-batches.png"), fullPage: true });
    await page.getByRole("link", { name: "invoices-eu.csv" }).click();
    await page.locator(".filters").getByRole("link", { name: "rejected", exact: true }).click();
    await page.screenshot({ path: join(docs, "console-batch.png"), fullPage: true });
    await page.getByRole("link", { name: "Passes", exact: true }).click();
    await page.screenshot({ path: join(docs, "console-passes.png"), fullPage: true });
    process.stdout.write(`wrote console-batches.png, console-batch.png and console-passes.png in ${docs}\n`);
  } finally {
    await browser.close();
    relay.kill("SIGTERM");
    await new Promise((done) => relay.once("exit", done));
    await sim.close();
    await redis?.dispose();
    await rm(drop, { recursive: true, force: true });
  }
}

/** The console's address, from the line `run --serve` prints once its pass is done. */
function servedAt(relay: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolveUrl, reject) => {
    let err = "";
    relay.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const url = /serving (http:\/\/\S+)\/ until/.exec(err)?.[1];
      if (url !== undefined) resolveUrl(url);
    });
    relay.once("exit", (code) => {
      reject(new Error(`run --serve ended (exit ${String(code)}) before serving:\n${err}`));
    });
  });
}

await main();
