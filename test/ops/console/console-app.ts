import type { FastifyInstance } from "fastify";
import type { HttpAddr } from "../../../src/config/http-addr.js";
import { loadConfig } from "../../../src/config/load.js";
import { newBatchId } from "../../../src/ledger/batch-id.js";
import { BatchStore } from "../../../src/ledger/batch-store.js";
import type { RedisClient } from "../../../src/ledger/redis-client.js";
import { RedisLedger } from "../../../src/ledger/redis-ledger.js";
import { checkOutboxDatabase } from "../../../src/ledger/outbox-detach.js";
import { Passes } from "../../../src/ledger/passes.js";
import { readSendSeries } from "../../../src/ledger/send-series.js";
import { createLogger, type Logger } from "../../../src/log/logger.js";
import { consoleRoutes } from "../../../src/ops/console/console-routes.js";
import type { ConsoleRow, RowsQuery } from "../../../src/ops/console/ports.js";
import { servedHosts } from "../../../src/ops/host-policy.js";
import { DeploymentReader } from "../../../src/queue/deployment-view.js";
import { httpApp } from "../../../src/ops/http-server.js";
import type { OpsContext } from "../../../src/ops/ops-server.js";
import { testPrefix, testRedis } from "../../support/redis.js";

export const TOKEN = "console-token-0123456789abcdef";
/** HTTP_ADDR of the console under test; inject's requests come on no socket, so this is the port served. */
export const ADDR: HttpAddr = { host: "127.0.0.1", port: 9464 };

export interface ConsoleAppOptions {
  /** Settings on top of QUEUE_PREFIX and CONSOLE_TOKEN. Default: the names the tests address it by. */
  readonly env?: Record<string, string>;
  readonly now?: () => number;
  readonly logger?: Logger;
}

export interface ConsoleApp {
  readonly app: FastifyInstance;
  readonly batches: BatchStore;
  readonly redis: RedisClient;
  readonly prefix: string;
  /** Batch ids the retry port was called with. */
  readonly retried: string[];
  /** Queries the rows port was asked. */
  readonly queries: RowsQuery[];
  close(): Promise<void>;
}

/**
 * The console's routes behind the server's Host check, on a fastify instance (for inject), on the test
 * Redis, with ports that record calls. By default it answers to inject's own Host (localhost:80) and to
 * console.test.
 */
export async function consoleApp(
  token: string | undefined,
  rows: ConsoleRow[] = [],
  options: ConsoleAppOptions = {},
): Promise<ConsoleApp> {
  const redis: RedisClient = testRedis();
  const prefix = testPrefix();
  const config = loadConfig({
    QUEUE_PREFIX: prefix,
    ...(token === undefined ? {} : { CONSOLE_TOKEN: token }),
    ...(options.env ?? { CONSOLE_ALLOWED_HOSTS: "localhost:80,console.test" }),
  });
  const logger = options.logger ?? createLogger({ level: "silent" });
  const hosts = servedHosts({
    addr: ADDR,
    consoleUrl: config.consoleUrl,
    allowed: config.consoleAllowedHosts,
  });
  const ctx: OpsContext = {
    config,
    redis: () => redis,
    stopping: new AbortController().signal,
    logger,
    hosts,
  };
  const retried: string[] = [];
  const queries: RowsQuery[] = [];
  const batches = new BatchStore(redis, prefix);
  const routes = consoleRoutes({
    batches: () => batches,
    deployment: () => new DeploymentReader(redis, config),
    rows: () => ({
      page: (_batch, query) => {
        queries.push(query);
        return Promise.resolve({ rows, source: "report" as const });
      },
    }),
    ledger: () => new RedisLedger(redis, prefix),
    writesRefused: () => () =>
      checkOutboxDatabase(redis, prefix, {
        hasDatabase: config.resultsDatabaseUrl !== undefined,
        use: "reads",
      }),
    passes: () => {
      const passes = new Passes(redis, prefix);
      return {
        get: (id) => passes.get(id),
        newest: (n) => passes.newest(n),
        count: () => passes.count(),
        series: (from, to) => readSendSeries(redis, prefix, from, to),
      };
    },
    retry: () => (batchId) => {
      retried.push(batchId);
      return Promise.resolve({ requeued: 1, busy: 0, superseded: 0, noDocument: 0 });
    },
    ...(options.now === undefined ? {} : { now: options.now }),
  })(ctx);
  const app = await httpApp({ addr: ADDR, routes: [routes], hosts: { policy: hosts, open: [], logger } });
  await app.ready();
  return {
    app,
    batches,
    redis,
    prefix,
    retried,
    queries,
    close: async () => {
      await app.close();
      redis.disconnect();
    },
  };
}

/** Opens a batch with a reported state and counts, as a pass would leave it. */
export async function reportedBatch(
  batches: BatchStore,
  file: string,
  counts: Record<string, number>,
): Promise<string> {
  const id = newBatchId(new Date("2026-11-20T01:00:00Z"));
  await batches.open({ id, file, format: "csv", path: `/nowhere/${id}`, host: "test" });
  await batches.update(id, { state: "reported", rows: 3, counts: JSON.stringify(counts) });
  return id;
}
