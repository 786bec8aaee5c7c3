import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openContext } from "../../src/cli/context.js";
import { redisTarget } from "../../src/config/redis-target.js";
import { createRedis, endConnection } from "../../src/queue/connection.js";
import { Passes } from "../../src/ledger/passes.js";
import { silentLogger } from "../../src/log/logger.js";
import { startScanService } from "../../src/use-cases/scan-service.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { tempDropDir } from "../support/drop.js";
import { testConfig } from "../support/engine.js";
import { until } from "../support/processes.js";

// `start`'s scan service in process: its first scan (at start, not the schedule's) takes no file: it names
// one it leaves (a name that is a drop file's but for a trailing space), and not one still settling.

/** A schedule that does not come during the test: only the scan at start runs. */
const NEVER_DURING_TEST = "0 0 1 1 *";
/** Generous: one scan of a folder of one file. */
const LIMIT_MS = 15_000;

const cleanups = cleanupsAfterEach();

describe("a scan of start that takes no file", () => {
  it("when a scan takes no file and names one left where it is, then its record names that file (status, the console), not one still settling, and the last-pass gauges stay as they were", async () => {
    const drop = await tempDropDir();
    cleanups.push(drop.cleanup);
    const logger = silentLogger();
    const prefix = `scan-left-${randomUUID()}`;
    const config = testConfig({
      apiUrl: "http://127.0.0.1:9",
      apiKey: "irs_live_e2e_key_0123456789",
      prefix,
      env: { DROP_DIR: drop.dir },
    });
    const ctx = await openContext(config, { dropFolder: true, logger });
    cleanups.push(() => ctx.close());
    await writeFile(join(drop.dir, "invoices.csv "), "external_id\n");
    // still settling (written just now, SETTLE_MS a minute): a later scan takes it, none names it
    await writeFile(join(drop.dir, "settling.csv"), "external_id\n");
    const watchDeps = { redis: ctx.redis, prefix, logger, retentionMs: config.resultsRetention };
    // A blocking worker's own connection, as start makes it.
    const connection = createRedis(redisTarget(config), "worker", "invoice-relay-scan");
    cleanups.push(async () => {
      endConnection(connection);
      await Promise.resolve();
    });
    const service = await startScanService({
      deps: { ...ctx, logger },
      connection,
      prefix,
      cron: NEVER_DURING_TEST,
      tz: undefined,
      settleMs: 60_000,
      watch: false,
      passes: { deps: watchDeps, exitCodeOf: (_batches, left) => (left > 0 ? 2 : 0) },
    });
    cleanups.push(() => service.close(1_000));
    const passes = new Passes(ctx.redis, prefix);

    await until(
      async () => (await passes.newest(5)).some((p) => p.endedAt !== undefined),
      LIMIT_MS,
      "the scan's record",
    );

    const [record] = await passes.newest(5);
    expect(record?.left?.map((f) => f.shown)).toEqual(["invoices.csv "]);
    expect(record?.exitCode).toBe(2);
    expect(await passes.lastOutcome()).toBeUndefined();
  });
});
