import { randomUUID } from "node:crypto";
import { access, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContext } from "../../src/cli/context.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import { BatchStore, type BatchMeta } from "../../src/ledger/batch-store.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { silentLogger } from "../../src/log/logger.js";
import { startSimulator, type SimulatorHandle, type SimulatorStats } from "../../src/simulator/index.js";
import { nightlyPass } from "../../src/use-cases/nightly-pass.js";
import { parseReport, summarySchema, tempDropDir, type ReportLine } from "../support/drop.js";
import { testConfig } from "../support/engine.js";

// Twelve nights of `run` (the nightlyPass use case) against one private Redis, so that its INFO memory is
// ours alone. The pass is given a clock a day apart per night instead of waiting: with a retention of
// 36 h, night N's re-drop of night N-1's file is within retention (all duplicates, nothing sent) and
// night N-2's batches expire at night N's sweep.
const API_KEY = "irs_live_e2e_key_0123456789";
/** Four times the steady night: a ledger growing by a night's records would be 4 × its size there. */
const NIGHTS = 12;
const INVOICES = 2000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = Date.UTC(2026, 10, 1, 2, 0, 0);
/** The steady state: from night 3 on, the ledger holds nights N-1 and N. */
const STEADY_NIGHT = 3;

interface Night {
  readonly night: number;
  readonly outcome: string;
  /** What broke this night, one line each; [] when all held. */
  readonly problems: string[];
  readonly batchesKept: number;
  readonly records: number;
  readonly effects: SimulatorStats["effects"];
  /** Requests the simulator received so far, and those with a key it had already seen. */
  readonly requests: number;
  readonly replays: number;
  readonly usedMemory: number;
}

let redis: RedisServer;
let admin: Redis;
let sim: SimulatorHandle;
let drop: { dir: string; cleanup: () => Promise<void> };
const nights: Night[] = [];

const fileName = (night: number) => `night-${String(night).padStart(2, "0")}.csv`;
const fileOf = (night: number) =>
  [
    "external_id,currency,destination_country,archive_policy",
    ...Array.from({ length: INVOICES }, (_, i) => `N${night}-${i},EUR,DE,eu-10y`),
  ].join("\n") + "\n";

beforeAll(async () => {
  redis = await RedisServer.start();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  sim = await startSimulator({ apiKey: API_KEY, seed: 11 });
  drop = await tempDropDir();
  const prefix = `nights-${randomUUID()}`;
  const config = testConfig({
    apiUrl: sim.url,
    apiKey: API_KEY,
    redisUrl: redis.url,
    prefix,
    // The default job lock: one that lapsed while a busy pass held the event loop would send a key twice.
    env: { DROP_DIR: drop.dir, SETTLE_MS: "0", RESULTS_RETENTION: "36h", LOCK_DURATION_MS: "30000" },
  });
  const logger = silentLogger();
  const clock = { at: START };
  const now = () => clock.at;
  /** Every batch any night reported, by id, with the night and its report rows. */
  const reported = new Map<string, { night: number; meta: BatchMeta; rows: ReportLine[] }>();
  const newOf = new Map<number, ReportLine[]>(); // night → the report rows of its new file

  for (let night = 1; night <= NIGHTS; night++) {
    clock.at = START + night * DAY;
    await writeFile(join(drop.dir, fileName(night)), fileOf(night));
    if (night > 1) await writeFile(join(drop.dir, fileName(night - 1)), fileOf(night - 1));

    const ctx = await openContext(config, { dropFolder: true, logger });
    const store = new RedisLedger(ctx.redis, prefix, now);
    const batches = new BatchStore(ctx.redis, prefix, now);
    const outcome = await nightlyPass(
      { ...ctx, ledger: store, batches, config, logger, now },
      { signal: new AbortController().signal, pollMs: 50 },
    ).finally(() => ctx.close());
    const problems: string[] = [];
    const metas = outcome.kind === "finished" ? outcome.batches : [];
    for (const meta of metas) {
      const rows = parseReport(await readFile(meta.report_csv ?? "", "utf8")).rows;
      reported.set(meta.id, { night, meta, rows });
      const counts = summarySchema.shape.counts.parse(JSON.parse(meta.counts ?? "{}"));
      if (meta.file === fileName(night)) {
        newOf.set(night, rows);
        const bad = rows.filter((r) => r.status !== "succeeded");
        if (rows.length !== INVOICES || bad.length > 0 || counts.succeeded !== INVOICES)
          problems.push(
            `new file: ${rows.length} rows, ${counts.succeeded} succeeded, first not: ${bad[0]?.line}`,
          );
      } else {
        // The re-drop: each row a duplicate of last night's row, same key and correlation ID.
        const earlier = newOf.get(night - 1) ?? [];
        const off = rows.filter(
          (r, i) =>
            r.status !== "duplicate" ||
            r.idempotency_key !== earlier[i]?.idempotency_key ||
            r.correlation_id !== earlier[i]?.correlation_id,
        );
        if (rows.length !== INVOICES || off.length > 0 || counts.duplicate !== INVOICES)
          problems.push(
            `re-drop: ${rows.length} rows, ${counts.duplicate} duplicate, first off: ${off[0]?.line}`,
          );
      }
    }
    if (metas.length !== (night === 1 ? 1 : 2)) problems.push(`${metas.length} batches reported`);

    // Kept: exactly the batches of nights N-1 and N; each original one with its keys, each key its record.
    // Read back on a connection of the test's own: the pass has closed its connections.
    const ledger = new RedisLedger(admin, prefix);
    const inspect = new BatchStore(admin, prefix);
    const kept = await inspect.list();
    const expected = [...reported].filter(([, b]) => b.night >= night - 1).map(([id]) => id);
    if ([...kept].sort().join() !== [...expected].sort().join())
      problems.push(`batches kept ${kept.join(" ")}, expected ${expected.join(" ")}`);
    const records = new Map<string, string>();
    for await (const record of ledger.scanRecords()) records.set(record.key, record.status);
    for (const id of expected) {
      const { meta, rows, night: of } = reported.get(id) ?? { meta: undefined, rows: [], night: 0 };
      const current = await inspect.get(id);
      if (current?.state !== "reported")
        problems.push(`batch ${id} (${meta?.file}) is ${current?.state ?? "gone"}`);
      if (meta?.file !== fileName(of)) continue; // a re-drop's rows are duplicates: it has no keys of its own
      const keys: string[] = [];
      for await (const page of inspect.keysOf(id)) keys.push(...page);
      const missing = rows.filter((r) => records.get(r.idempotency_key) !== "succeeded");
      if (keys.length !== INVOICES || missing.length > 0)
        problems.push(`batch ${id}: ${keys.length} keys, ${missing.length} records missing or not succeeded`);
    }
    for (const { meta } of reported.values()) {
      for (const path of [meta.report_csv ?? "", meta.summary_json ?? ""])
        await access(path).catch(() => problems.push(`report file of ${meta.id} missing: ${path}`));
    }
    const counts = await admin.hgetall(ledger.names.counts);
    const negative = Object.entries(counts).filter(([, n]) => Number(n) < 0);
    if (negative.length > 0) problems.push(`negative counts ${JSON.stringify(negative)}`);
    if (Number(counts["succeeded"] ?? 0) !== records.size)
      problems.push(`counts say ${counts["succeeded"]} succeeded, ${records.size} records`);

    await admin.call("MEMORY", "PURGE");
    const info = await admin.info("memory");
    nights.push({
      night,
      outcome: outcome.kind,
      problems,
      batchesKept: kept.length,
      records: records.size,
      effects: sim.stats().effects,
      requests: sim.stats().requests.total,
      replays: sim.stats().replays,
      usedMemory: Number(/^used_memory:(\d+)/m.exec(info)?.[1]),
    });
    if (outcome.kind !== "finished") break; // what follows would only repeat this failure
  }
}, 300_000);

afterAll(async () => {
  admin.disconnect();
  await sim.close();
  await redis.dispose();
  await drop.cleanup();
});

const series = () =>
  nights
    .map((n) => `night ${n.night}: ${n.usedMemory} B, ${n.records} records, ${n.batchesKept} batches`)
    .join("\n");

describe("12 nights with a retention of 36 h", () => {
  it("when every night drops 2,000 new invoices and re-drops last night's file, then every pass finishes, each new invoice succeeds with one effect and the re-drop is all duplicates, never sent", () => {
    expect(nights.map((n) => `${n.night}: ${n.outcome}`)).toEqual(
      Array.from({ length: NIGHTS }, (_, i) => `${i + 1}: finished`),
    );
    // The simulator would answer a key sent again from its memory (a replay, no new effect): only the
    // request count shows whether a re-drop was sent.
    const sent = nights.filter(
      (n) =>
        n.requests !== n.night * INVOICES ||
        n.replays !== 0 ||
        n.effects.total !== n.night * INVOICES ||
        n.effects.distinctKeys !== n.night * INVOICES ||
        n.effects.keysWithMultipleEffects !== 0,
    );
    expect(
      sent.map((n) => ({ night: n.night, requests: n.requests, replays: n.replays, effects: n.effects })),
    ).toEqual([]);
  });

  it("when retention removes night N-2's batches, then every batch of the last two nights is still there with its records and report, and no status count goes negative", () => {
    expect(nights).toHaveLength(NIGHTS);
    expect(
      nights.filter((n) => n.problems.length > 0).map((n) => `night ${n.night}: ${n.problems.join("; ")}`),
    ).toEqual([]);
  });

  it("when 12 nights have run, then the ledger holds two nights' records, as after night 2, not 12", () => {
    expect(nights).toHaveLength(NIGHTS);
    expect(
      nights.map((n) => n.records),
      series(),
    ).toEqual(nights.map((n) => Math.min(n.night, 2) * INVOICES));
    expect(nights.at(-1)?.batchesKept, series()).toBe(4);
  });

  it("when 12 nights have run, then Redis used_memory is within 1.5 times that after night 3", () => {
    expect(nights).toHaveLength(NIGHTS);
    const steady = nights[STEADY_NIGHT - 1]?.usedMemory ?? 0;
    const last = nights.at(-1)?.usedMemory ?? Infinity;
    expect(steady, series()).toBeGreaterThan(0);
    expect(
      last,
      `used_memory after night ${NIGHTS} vs night ${STEADY_NIGHT}:\n${series()}`,
    ).toBeLessThanOrEqual(1.5 * steady);
  });
});
