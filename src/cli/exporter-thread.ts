import { parentPort, workerData } from "node:worker_threads";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl } from "../config/url-credentials.js";
import { createLogger, type Logger } from "../log/logger.js";
import { createRedis, endConnection } from "../queue/connection.js";
import { DatabaseUnreachableError } from "../records/errors/database-unreachable-error.js";
import { OutboxExporter } from "../records/exporter.js";
import { openPool, type Pool } from "../records/pool.js";
import {
  exporterThreadSettingsSchema,
  stopMessage,
  threadRedisTarget,
  type ExporterThreadSettings,
} from "./exporter-thread-settings.js";
import { ExporterThreadError } from "./errors/exporter-thread-error.js";

/**
 * The exporter of the results of record, on a thread of its own (started by results-export.ts): its
 * own Redis connection, pool and logger, so that writing to PostgreSQL never holds up the submission on
 * the main thread. Ends after the read in hand once asked to stop.
 */

const port = parentPort;
if (port === null)
  throw new ExporterThreadError(
    "exporter-thread.js runs only as the exporter thread of run, start or worker",
  );
const parsed = exporterThreadSettingsSchema.safeParse(workerData);
if (!parsed.success)
  throw new ExporterThreadError(
    `the exporter thread's settings are not usable: ${z.prettifyError(parsed.error)}`,
  );
const settings = parsed.data;
const logger = createLogger({
  ...settings.log,
  isTTY: settings.log.isTTY ?? false,
  name: "invoice-relay-exporter",
}).child({
  component: "exporter",
});
const stopping = new AbortController();
port.on("message", (message: unknown) => {
  if (stopMessage.safeParse(message).success) stopping.abort();
});

const pool = await openPoolPatiently(settings, logger, stopping.signal);
if (pool !== undefined) {
  const redis = createRedis(threadRedisTarget(settings), "worker", "invoice-relay-exporter");
  redis.on("error", () => undefined);
  const exporter = new OutboxExporter({
    redis,
    prefix: settings.prefix,
    pool,
    url: settings.databaseUrl,
    logger,
    claimIdleMs: settings.claimIdleMs,
  });
  exporter.start();
  port.postMessage({ type: "started" });
  if (!stopping.signal.aborted)
    await new Promise((resolve) => {
      stopping.signal.addEventListener("abort", resolve, { once: true });
    });
  await exporter.stop();
  endConnection(redis);
  await pool.end().catch(() => undefined);
  port.postMessage({ type: "stopped", ...exporter.stats });
}
port.close();

/**
 * The pool, once PostgreSQL answers (the process checked it at its start; a thread started again may
 * find it down): retried with backoff, warned of at each try. Undefined when asked to stop first.
 */
async function openPoolPatiently(
  { databaseUrl }: ExporterThreadSettings,
  log: Logger,
  signal: AbortSignal,
): Promise<Pool | undefined> {
  for (let tries = 0; !signal.aborted; tries++) {
    try {
      return await openPool(databaseUrl, { applicationName: "invoice-relay-exporter", max: 2 });
    } catch (error) {
      if (!(error instanceof DatabaseUnreachableError)) throw error;
      const delay = Math.min(30_000, 1000 * 2 ** Math.min(tries, 5));
      log.warn(
        { database: safeUrl(databaseUrl, DATABASE_URL_SETTING), retryInMs: delay },
        `${error.message}; the outbox in Redis keeps the results until it answers`,
      );
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    }
  }
  return undefined;
}
