import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, requireSubmitConfig, type SubmitConfig } from "../../src/config/load.js";
import { readFleetTotals } from "../../src/ledger/fleet-counts.js";
import { readSendSeries } from "../../src/ledger/send-series.js";
import { readApiKeyRefusal } from "../../src/queue/api-key-refusal.js";
import { createLogger } from "../../src/log/logger.js";
import { startSubmission } from "../../src/queue/submission-service.js";
import type { SimulatorHandle } from "../../src/simulator/index.js";
import type { SubmitOutcome } from "../../src/submit/submit-invoice.js";
import { enqueueBatch } from "../support/engine.js";
import { testInvoices } from "../support/invoices.js";
import { testPrefix, testRedis, testRedisUrl } from "../support/redis.js";
import { submissionFixture } from "../support/submission-fixture.js";

const OLD_KEY = "irs_live_before_rotation_0a1b2c3d";
const NEW_KEY = "irs_live_after_rotation_4e5f6a7b";
const INVOICES = 150;
/** The key file is read this often here (10 s in a process), so a night sees it change several times. */
const POLL_MS = 20;
const { cleanups, simulator, storeOf } = submissionFixture(OLD_KEY);

/** A folder for the key file, removed after the test. */
async function secretsDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "relay-key-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A submission worker reading its key from `keyFile`, and what it logged and decided: each invoice's
 * final outcome, and whether the service's refusal of the key paused submission.
 */
async function night(sim: SimulatorHandle, keyFile: string) {
  const config: SubmitConfig = requireSubmitConfig(
    loadConfig({
      REDIS_URL: testRedisUrl(),
      INVOICE_API_URL: sim.url,
      INVOICE_API_KEY_FILE: keyFile,
      QUEUE_PREFIX: testPrefix(),
      SUBMIT_CONCURRENCY: "4",
      LOG_LEVEL: "info",
    }),
  );
  const lines: string[] = [];
  const logger = createLogger({
    format: "json",
    isTTY: false,
    level: "info",
    destination: { write: (line: string) => void lines.push(line) },
  });
  const invoices = testInvoices(INVOICES, `rot-${config.queuePrefix}`);
  const startedAt = Date.now();
  await enqueueBatch(config, "night", invoices);
  const finals = new Map<string, SubmitOutcome["kind"]>();
  let refusals = 0;
  let allFinal: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allFinal = resolve));
  const service = await startSubmission(config, logger, {
    keyFilePollMs: POLL_MS,
    onApiKeyRefused: () => {
      refusals++;
      allFinal();
    },
    onOutcome: (key, outcome) => {
      if (outcome.kind === "succeeded" || outcome.kind === "failed") finals.set(key, outcome.kind);
      if (finals.size === INVOICES) allFinal();
    },
  });
  cleanups.push(() => service.close(1000));
  return {
    /** Once every invoice is final, or the key is refused for good: the worker closed. */
    finished: async () => {
      await done;
      // The requests still out when the night ended have their answers, and their say in the log.
      await service.close(1000);
      const records = await storeOf(config).getMany(invoices.map((i) => i.key));
      const redis = testRedis();
      try {
        return {
          refusals,
          statuses: new Set(records.map((r) => r?.status)),
          log: lines.join(""),
          totals: await readFleetTotals(redis, config.queuePrefix),
          refusal: await readApiKeyRefusal(redis, config.queuePrefix),
          chart: await readSendSeries(redis, config.queuePrefix, startedAt, Date.now()),
        };
      } finally {
        redis.disconnect();
      }
    },
  };
}

/** Calls `act` once, after the service has accepted `after` requests. */
function afterAccepted(sim: SimulatorHandle, after: number, act: () => Promise<void> | void): void {
  let accepted = 0;
  sim.events.on("attempt", (attempt) => {
    if (attempt.status === 201 && ++accepted === after) void act();
  });
}

/** Every invoice reached the service's effects exactly once. */
function sentOnce(sim: SimulatorHandle): void {
  expect(sim.stats().effects).toMatchObject({
    total: INVOICES,
    distinctKeys: INVOICES,
    keysWithMultipleEffects: 0,
  });
}

describe("the API key file rewritten while a night runs", () => {
  it("when the file is written in place and half of the new key sits in it a while, then the old key stays in use, said once naming the file: the night completes, each invoice sent once", async () => {
    const sim = await simulator({ latencyMs: { min: 5, max: 15 } });
    const keyFile = join(await secretsDir(), "invoice_api_key");
    await writeFile(keyFile, `${OLD_KEY}\n`, { mode: 0o600 });
    afterAccepted(sim, INVOICES / 5, () => writeFile(keyFile, NEW_KEY.slice(0, 14)));
    afterAccepted(sim, INVOICES / 2, () => writeFile(keyFile, `${NEW_KEY}\n`));

    const result = await (await night(sim, keyFile)).finished();

    expect(result.refusals).toBe(0);
    expect(result.statuses).toEqual(new Set(["succeeded"]));
    sentOnce(sim);
    // Both the half key and the whole new one were refused: kept the old key, said once for each.
    expect(sim.stats().requests.byStatus["401"] ?? 0).toBeGreaterThan(0);
    const kept = result.log.split("\n").filter((line) => line.includes("still sending with the key"));
    // Said when a value is first refused, not at every request: at most once per value.
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.length).toBeLessThanOrEqual(2);
    for (const line of kept) expect(line).toContain(keyFile);
    expect(result.log).not.toContain(NEW_KEY.slice(0, 14));
    expect(result.log).not.toContain(OLD_KEY);
    // Every answer is counted in its class, the refusals sent once more with the old key too, and the
    // chart shows them as "other" answers.
    const byClass = (digit: string) =>
      Object.entries(sim.stats().requests.byStatus)
        .filter(([status]) => status.startsWith(digit))
        .reduce((sum, [, n]) => sum + n, 0);
    expect(result.totals.attempts["2xx"]).toBe(byClass("2"));
    expect(result.totals.attempts["4xx"]).toBe(byClass("4"));
    expect(result.totals.sent).toBe(sim.stats().requests.total);
    const charted = (kind: "accepted" | "other") => result.chart.reduce((sum, p) => sum + p[kind], 0);
    expect(charted("accepted")).toBe(byClass("2"));
    expect(charted("other")).toBe(byClass("4"));
  });

  it("when a Kubernetes ..data swap brings a key the service takes only later, then the old key is used until the service switches, then the new one: the night completes, each invoice sent once", async () => {
    const sim = await simulator({ latencyMs: { min: 5, max: 15 } });
    const dir = await secretsDir();
    // The kubelet's layout: the file is a link through `..data`, a link to the current version's folder.
    for (const [version, key] of [
      ["..2026_12_07_01", OLD_KEY],
      ["..2026_12_07_02", NEW_KEY],
    ] as const) {
      await mkdir(join(dir, version));
      await writeFile(join(dir, version, "invoice_api_key"), key);
    }
    await symlink("..2026_12_07_01", join(dir, "..data"));
    await symlink("..data/invoice_api_key", join(dir, "invoice_api_key"));
    afterAccepted(sim, INVOICES / 5, async () => {
      await symlink("..2026_12_07_02", join(dir, "..data_tmp"));
      await rename(join(dir, "..data_tmp"), join(dir, "..data"));
    });
    afterAccepted(sim, INVOICES / 2, () => {
      sim.setApiKey(NEW_KEY);
    });

    const result = await (await night(sim, join(dir, "invoice_api_key"))).finished();

    expect(result.refusals).toBe(0);
    expect(result.statuses).toEqual(new Set(["succeeded"]));
    sentOnce(sim);
    expect(result.log).toMatch(/still sending with the key it accepted before/);
    expect(sim.stats().requests.byStatus["401"] ?? 0).toBeGreaterThan(0);
  });

  it("when the file is overwritten in place with a key the service takes, then it is used from then on, nothing refused for good: the night completes, each invoice sent once", async () => {
    const sim = await simulator({ latencyMs: { min: 5, max: 15 } });
    const keyFile = join(await secretsDir(), "invoice_api_key");
    await writeFile(keyFile, `${OLD_KEY}\n`, { mode: 0o600 });
    afterAccepted(sim, INVOICES / 3, async () => {
      await writeFile(keyFile, `${NEW_KEY}\n`);
      sim.setApiKey(NEW_KEY);
    });

    const result = await (await night(sim, keyFile)).finished();

    expect(result.refusals).toBe(0);
    expect(result.statuses).toEqual(new Set(["succeeded"]));
    sentOnce(sim);
    expect(result.log).toMatch(/INVOICE_API_KEY_FILE holds a new value: trying it from now on/);
  });

  it("when the service refuses the key and none was accepted before, then submission pauses as it always did, said once", async () => {
    // Answers take a while, so several requests are out when the first refusal comes back.
    const sim = await simulator({ apiKey: NEW_KEY, latencyMs: { min: 30, max: 30 } });
    const keyFile = join(await secretsDir(), "invoice_api_key");
    await writeFile(keyFile, `${OLD_KEY}\n`, { mode: 0o600 });

    const result = await (await night(sim, keyFile)).finished();

    expect(result.refusals).toBeGreaterThan(0);
    expect(sim.stats().effects.total).toBe(0);
    expect(result.statuses.has("failed")).toBe(false);
    expect(result.log).not.toMatch(/still sending with the key/);
    // Said once, not for each request in flight, naming the file to fix.
    const said = result.log.split("\n").filter((line) => line.includes("refused the API key"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`fix the key in INVOICE_API_KEY_FILE (${keyFile})`);
    // Kept for `status` and the console, which say the same.
    expect(result.refusal?.setting).toBe(`the key in INVOICE_API_KEY_FILE (${keyFile})`);
  });

  it("when the service revokes the key mid-night and the file still holds it, then submission pauses, said once though every request out was refused", async () => {
    const sim = await simulator({ latencyMs: { min: 20, max: 30 } });
    const keyFile = join(await secretsDir(), "invoice_api_key");
    await writeFile(keyFile, `${OLD_KEY}\n`, { mode: 0o600 });
    afterAccepted(sim, INVOICES / 3, () => {
      sim.setApiKey(NEW_KEY);
    });

    const result = await (await night(sim, keyFile)).finished();

    expect(result.refusals).toBeGreaterThan(1);
    expect(result.statuses.has("failed")).toBe(false);
    const said = result.log.split("\n").filter((line) => line.includes("refused the API key"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`fix the key in INVOICE_API_KEY_FILE (${keyFile})`);
    // Kept for `status` and the console, which say the same.
    expect(result.refusal?.setting).toBe(`the key in INVOICE_API_KEY_FILE (${keyFile})`);
  });
});
