import { PostgresServer } from "../src/dev/postgres-server.js";
import { silentLogger } from "../src/log/logger.js";
import { migrate } from "../src/records/migrations.js";
import { openPool, type Pool } from "../src/records/pool.js";

/** The tables the export writes, whose rows per invoice the benchmarks count. */
const TABLES = ["results", "attempts", "batch_rows", "batches"] as const;

/**
 * A private PostgreSQL for the benchmarks, with production's durability (fsync and synchronous
 * commit on), migrated as `invoice-relay db migrate` does.
 */
export interface BenchDatabase {
  readonly url: string;
  readonly pool: Pool;
  /** Rows in the tables the export writes (results, attempts, batch_rows, batches). */
  rowsWritten(): Promise<number>;
  /** Empties those tables, so that the next pass starts as on a new deployment. */
  clear(): Promise<void>;
  close(): Promise<void>;
}

export async function startBenchDatabase(): Promise<BenchDatabase> {
  const server = await PostgresServer.start({ durable: true });
  let pool: Pool | undefined;
  try {
    pool = await openPool(server.url, { applicationName: "invoice-relay-bench" });
    await migrate(pool, { logger: silentLogger() });
  } catch (error) {
    await pool?.end();
    await server.dispose();
    throw error;
  }
  const db = pool;
  return {
    url: server.url,
    pool: db,
    rowsWritten: async () => {
      const counts = TABLES.map((t) => `(SELECT count(*) FROM ${t})`).join(" + ");
      const { rows } = await db.query<{ n: string }>(`SELECT ${counts} AS n`);
      return Number(rows[0]?.n ?? 0);
    },
    clear: async () => {
      await db.query(`TRUNCATE ${TABLES.join(", ")}`);
    },
    close: async () => {
      await db.end();
      await server.dispose();
    },
  };
}
