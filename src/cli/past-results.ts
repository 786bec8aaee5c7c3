import { databaseHost, DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl } from "../config/url-credentials.js";
import type { Config } from "../config/load.js";
import { coerceError } from "../errors/relay-error.js";
import type { BeyondRetention } from "../ingest/past-results.js";
import { INGEST_CHUNKS_IN_FLIGHT } from "../ingest/ingest-file.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { RedisRecordRestorer } from "../ledger/restore-records.js";
import type { Logger } from "../log/logger.js";
import { DatabaseUnreachableError } from "../records/errors/database-unreachable-error.js";
import { pastResults } from "../records/past-results.js";
import { createPool, isConnectionFailure, unreachable, type Pool } from "../records/pool.js";
import { SchemaOutdatedError } from "../records/errors/schema-outdated-error.js";
import { checkSchema } from "../records/schema-version.js";
import { waitingFor } from "../lifecycle/waits.js";
import { withinSignal } from "../lifecycle/within-signal.js";
import { endedBy } from "../lifecycle/pass-signal.js";

export interface OpenedPastResults {
  /**
   * What ingest needs to deduplicate beyond retention; undefined when RESULTS_DATABASE_URL is not set.
   * `until`: the signal that ends a look-up's wait for PostgreSQL (a pass's passSignal, a stop signal).
   */
  beyondRetention(redis: RedisClient, prefix: string, until?: AbortSignal): BeyondRetention | undefined;
  close(): Promise<void>;
}

/**
 * The results of record that ingest asks about the rows of each chunk, when RESULTS_DATABASE_URL is set:
 * a pool (a connection per ingest chunk under way), checked to reach a migrated schema before any file
 * is claimed. PostgreSQL not answering does not stop the process: it is warned of, submission goes on,
 * and each look-up waits for it (past-results.ts in src/ingest), checking the schema first once it
 * answers. A schema not migrated, a refused login or a wrong database still stop the command here, and so
 * does a PostgreSQL still silent when `until` ends (run's deadline): named, by the deadline.
 */
export async function openPastResults(
  config: Config,
  logger: Logger,
  until?: AbortSignal,
): Promise<OpenedPastResults> {
  const url = config.resultsDatabaseUrl;
  if (url === undefined) return { beyondRetention: () => undefined, close: () => Promise.resolve() };
  const where = safeUrl(url, DATABASE_URL_SETTING);
  const host = databaseHost(url);
  const options = { max: INGEST_CHUNKS_IN_FLIGHT, applicationName: "invoice-relay-ingest" };
  const pool: Pool = createPool(url, options);
  let down = false;
  // Named while it lasts: a PostgreSQL that takes the connection and never answers is what a hard stop names.
  const checking = `PostgreSQL at ${host} (RESULTS_DATABASE_URL), checked at start`;
  const silent = (signal: AbortSignal) =>
    new DatabaseUnreachableError(where, `it did not answer before ${endedBy(signal)}`);
  try {
    await waitingFor(checking, () => answers(pool, url, until, silent));
  } catch (error) {
    if (
      until?.aborted === true ||
      !(error instanceof DatabaseUnreachableError && isConnectionFailure(error.cause))
    )
      throw error;
    logger.warn(
      { database: host, reason: coerceError(error.cause).message },
      `PostgreSQL at ${host} (RESULTS_DATABASE_URL) does not answer: invoices already queued are sent, ` +
        "and new files wait for it to be checked against the results of record",
    );
    down = true;
  }
  // Checked once it answers; a failed check (PostgreSQL gone again) is made again by the next look-up.
  let schema: Promise<unknown> | undefined;
  const schemaChecked = (): Promise<unknown> => {
    schema ??= checkSchema(pool, { where }).catch((error: unknown) => {
      schema = undefined;
      throw error instanceof SchemaOutdatedError || !isConnectionFailure(error)
        ? error
        : unreachable(url, error);
    });
    return schema;
  };
  if (!down)
    await waitingFor(checking, () => withinSignal(schemaChecked(), until, silent)).catch(
      async (error: unknown) => {
        if (until?.aborted !== true) await pool.end();
        throw error;
      },
    );
  return {
    beyondRetention: (redis, prefix, until) => ({
      results: {
        lookUp: async (asked) => {
          await schemaChecked();
          return pastResults(pool, url, asked);
        },
      },
      ledger: new RedisRecordRestorer(redis, prefix),
      host,
      until,
    }),
    close: () => pool.end(),
  };
}

/**
 * Whether PostgreSQL answers a query, within `until`: a connection left without an answer, or made
 * too late, is closed (pg's Client.end() destroys the socket of a query under way), so nothing keeps
 * the process alive.
 */
async function answers(
  pool: Pool,
  url: string,
  until: AbortSignal | undefined,
  silent: (signal: AbortSignal) => Error,
): Promise<void> {
  const connecting = pool.connect();
  const client = await withinSignal(connecting, until, silent).catch((error: unknown) => {
    // A connection made after `until` ended (a deadline come before it) is closed as it comes.
    connecting.then(
      (late) => {
        late.release(true);
      },
      () => undefined,
    );
    throw until?.aborted === true ? error : unreachable(url, error);
  });
  try {
    await withinSignal(client.query("SELECT 1"), until, silent);
    client.release();
  } catch (error) {
    client.release(true);
    throw until?.aborted === true ? error : unreachable(url, error);
  }
}
