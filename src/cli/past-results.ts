import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl } from "../config/url-credentials.js";
import type { Config } from "../config/load.js";
import type { BeyondRetention } from "../ingest/past-results.js";
import { INGEST_CHUNKS_IN_FLIGHT } from "../ingest/ingest-file.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { RedisRecordRestorer } from "../ledger/restore-records.js";
import { succeededResults } from "../records/past-results.js";
import { openPool } from "../records/pool.js";
import { checkSchema } from "../records/schema-version.js";

export interface OpenedPastResults {
  /** What ingest needs to deduplicate beyond retention; undefined when RESULTS_DATABASE_URL is not set. */
  beyondRetention(redis: RedisClient, prefix: string): BeyondRetention | undefined;
  close(): Promise<void>;
}

/**
 * The results of record that ingest asks about keys Redis's retention has forgotten, when
 * RESULTS_DATABASE_URL is set: a pool (a connection per ingest chunk under way), checked to reach a
 * migrated schema before any file is claimed.
 */
export async function openPastResults(config: Config): Promise<OpenedPastResults> {
  const url = config.resultsDatabaseUrl;
  if (url === undefined) return { beyondRetention: () => undefined, close: () => Promise.resolve() };
  const pool = await openPool(url, { max: INGEST_CHUNKS_IN_FLIGHT, applicationName: "invoice-relay-ingest" });
  try {
    await checkSchema(pool, { where: safeUrl(url, DATABASE_URL_SETTING) });
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    beyondRetention: (redis, prefix) => ({
      results: { succeeded: (keys) => succeededResults(pool, url, keys) },
      ledger: new RedisRecordRestorer(redis, prefix),
    }),
    close: () => pool.end(),
  };
}
