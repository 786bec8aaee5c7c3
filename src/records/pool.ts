import pg from "pg";
import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl, urlCredentials } from "../config/url-credentials.js";
import { maskSecrets } from "../log/logger.js";
import { DatabaseUnreachableError } from "./errors/database-unreachable-error.js";

export type Pool = pg.Pool;

export interface PoolOptions {
  /** Connections at most (default 4: the commands that use it make few queries at once). */
  readonly max?: number;
  /** How long a connection may take before the database counts as unreachable (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** Shown in pg_stat_activity. */
  readonly applicationName?: string;
}

/**
 * A pool of connections to RESULTS_DATABASE_URL, checked with one query so that a wrong URL fails here,
 * with a message that names where (no password) and what to check.
 */
export async function openPool(url: string, options: PoolOptions = {}): Promise<Pool> {
  const pool = createPool(url, options);
  try {
    await pool.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unreachable(url, error);
  }
  return pool;
}

/**
 * A pool that connects on its first query, for a process that goes on while PostgreSQL is down (openPool
 * checks it at once instead).
 */
export function createPool(url: string, options: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    application_name: options.applicationName ?? "invoice-relay",
  });
  // An idle connection the server closes (a restart) is replaced on the next query; without a
  // listener its error would end the process.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Whether a query failed because PostgreSQL did not answer or let the connection in for now (no server
 * error at all, or SQLSTATE class 08 connection exception, 53 insufficient resources, 57 operator
 * intervention such as a shutdown or a start-up), rather than refusing the query or the login itself: the
 * first passes when PostgreSQL is back, the second needs the operator.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return true;
  return /^(08|53|57)/.test(error.code ?? "");
}

/** The error to show for a connection that failed: the URL and the driver's reason, without the password. */
export function unreachable(url: string, error: unknown): DatabaseUnreachableError {
  const text = error instanceof Error ? error.message || error.name : String(error);
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  const reason = maskSecrets(code === "" || text.includes(code) ? text : `${code}: ${text}`, [
    ...urlCredentials(url),
  ]);
  return new DatabaseUnreachableError(safeUrl(url, DATABASE_URL_SETTING), reason, { cause: error });
}
