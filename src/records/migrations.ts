import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Logger } from "../log/logger.js";
import type { Pool } from "./pool.js";

/** The schema's migrations, shipped beside this file (the build copies them); applied in name order. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

/** The table where node-pg-migrate notes each migration applied, in the connection's `public` schema. */
export const MIGRATIONS_TABLE = "schema_migrations";

/** Advisory lock id of `db migrate`: a second migrator waits for the first, then finds nothing to do. */
export const MIGRATION_LOCK = 4_917_362_028_115_731;

/** This build's migrations, oldest first, by name (the file name without `.sql`). */
export async function bundledMigrations(dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const files = await readdir(dir);
  return files
    .filter((f) => f.endsWith(".sql"))
    .map((f) => f.slice(0, -".sql".length))
    .sort();
}

export interface MigrateOptions {
  readonly logger: Logger;
  /** Apply at most this many (tests build an old schema with it). */
  readonly count?: number;
  readonly dir?: string;
}

/**
 * Applies the pending migrations in one transaction under an advisory lock: two migrators at once are
 * safe (the second waits, then applies nothing). Resolves to the names applied, oldest first.
 */
export async function migrate(pool: Pool, options: MigrateOptions): Promise<string[]> {
  const { runner } = await import("node-pg-migrate");
  const client = await pool.connect();
  const log = options.logger.child({ component: "migrate" });
  try {
    const applied = await runner({
      dbClient: client,
      dir: options.dir ?? MIGRATIONS_DIR,
      migrationsTable: MIGRATIONS_TABLE,
      migrationsSchema: "public",
      direction: "up",
      ...(options.count === undefined ? {} : { count: options.count }),
      checkOrder: true,
      singleTransaction: true,
      lockValue: MIGRATION_LOCK,
      advisoryLockMode: "wait",
      logger: {
        debug: (message: string) => {
          log.debug(message);
        },
        info: (message: string) => {
          log.debug(message);
        },
        warn: (message: string) => {
          log.warn(message);
        },
        error: (message: string) => {
          log.error(message);
        },
      },
    });
    return applied.map((m) => m.name);
  } finally {
    client.release();
  }
}
