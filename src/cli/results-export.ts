import { setTimeout as sleep } from "node:timers/promises";
import { databaseHost, DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl } from "../config/url-credentials.js";
import type { Config } from "../config/load.js";
import { coerceError } from "../errors/relay-error.js";
import { redisTarget } from "../config/redis-target.js";
import { Outbox } from "../ledger/outbox.js";
import { outboxBacklog, redisTimeMs } from "../ledger/outbox-backlog.js";
import type { RedisClient } from "../ledger/redis-client.js";
import type { Logger } from "../log/logger.js";
import { createRedis, endConnection } from "../queue/connection.js";
import { DatabaseUnreachableError } from "../records/errors/database-unreachable-error.js";
import { isConnectionFailure, openPool, type Pool } from "../records/pool.js";
import { checkSchema } from "../records/schema-version.js";
import { superviseExporter } from "./exporter-supervisor.js";
import { exporterThreadSettings } from "./exporter-thread-settings.js";
import { logSecrets } from "./runtime.js";

/** The exporter of a submitting process (`run`, `start`, `worker`), on a thread of its own, while RESULTS_DATABASE_URL is set. */
export interface ResultsExport {
  /**
   * Waits until the outbox holds no event written at or before `cutoffMs` (Redis' clock, `redisNow`):
   * true once so, false when `deadline` (epoch ms) passed or `signal` stopped the wait first.
   */
  waitExported(cutoffMs: number, until: { deadline?: number; signal?: AbortSignal }): Promise<boolean>;
  /** Redis' clock now: the clock of the outbox's entry ids. */
  redisNow(): Promise<number>;
  /** Stops the exporter thread after the read in hand, then closes this side's connection. */
  close(): Promise<void>;
}

/** How often waitExported looks at the outbox: a pass ends at most this long after its last event left. */
const EXPORT_POLL_MS = 50;
/** How long a process waits for its exporter thread to run before it takes work anyway. */
const EXPORTER_START_WAIT_MS = 5_000;

/**
 * With RESULTS_DATABASE_URL set: refuses an unreachable database (DatabaseUnreachableError) or an old
 * schema (SchemaOutdatedError: "run `invoice-relay db migrate`"), turns the deployment's outbox on before
 * this process takes any work, and starts the exporter thread that drains it (exporter-thread.ts), kept
 * running by superviseExporter. Undefined without the setting.
 */
export async function startResultsExport(config: Config, logger: Logger): Promise<ResultsExport | undefined> {
  const url = config.resultsDatabaseUrl;
  if (url === undefined) return undefined;
  const where = safeUrl(url, DATABASE_URL_SETTING);
  const down = await checkDatabase(url, where, logger);
  let redis: RedisClient | undefined;
  try {
    redis = createRedis(redisTarget(config), "worker", "invoice-relay-exporter");
    redis.on("error", () => undefined);
    await new Outbox(redis, config.queuePrefix).enable();
  } catch (error) {
    if (redis !== undefined) endConnection(redis);
    throw error;
  }
  const connection = redis;
  const thread = superviseExporter(
    exporterThreadSettings(config, url, {
      level: logger.level,
      format: config.logFormat,
      isTTY: process.stderr.isTTY,
      secrets: logSecrets(config),
    }),
    logger.child({ component: "exporter" }),
  );
  // The thread loads its modules and opens its pool before this process takes work, so that start-up is
  // not paid while submitting; a thread that takes longer (PostgreSQL slow to answer) goes on starting.
  if (!down && !(await thread.started(EXPORTER_START_WAIT_MS)))
    logger.warn(
      { database: where, waitedMs: EXPORTER_START_WAIT_MS },
      "the exporter thread is still starting: submission goes on and the results wait in the outbox until it runs",
    );
  logger.info({ database: where }, "exporting the results of record to PostgreSQL");
  let closing: Promise<void> | undefined;
  return {
    redisNow: () => redisTimeMs(connection),
    waitExported: async (cutoffMs, until) => {
      for (;;) {
        const backlog = await outboxBacklog(connection, config.queuePrefix);
        if (backlog.oldest === undefined || backlog.oldest.at > cutoffMs) return true;
        if (until.signal?.aborted === true) return false;
        if (until.deadline !== undefined && Date.now() >= until.deadline) return false;
        await sleep(EXPORT_POLL_MS);
      }
    },
    close: () => {
      closing ??= (async () => {
        await thread.stop();
        endConnection(connection);
      })();
      return closing;
    },
  };
}

/**
 * Refuses a database with an old schema, a refused login or no such database; one that does not answer
 * now is warned of (true): submission goes on, the results wait in the outbox and the exporter thread
 * connects once it answers.
 */
async function checkDatabase(url: string, where: string, logger: Logger): Promise<boolean> {
  let pool: Pool;
  try {
    pool = await openPool(url, { applicationName: "invoice-relay-exporter", max: 1 });
  } catch (error) {
    if (!(error instanceof DatabaseUnreachableError && isConnectionFailure(error.cause))) throw error;
    logger.warn(
      { database: databaseHost(url), reason: coerceError(error.cause).message },
      "PostgreSQL does not answer: submission goes on and the results wait in the outbox until it does",
    );
    return true;
  }
  try {
    await checkSchema(pool, { where });
    return false;
  } finally {
    await pool.end().catch(() => undefined);
  }
}
