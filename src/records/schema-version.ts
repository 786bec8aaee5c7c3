import { z } from "zod";
import { bundledMigrations, MIGRATIONS_TABLE } from "./migrations.js";
import { SchemaOutdatedError } from "./errors/schema-outdated-error.js";
import type { Pool } from "./pool.js";

/** Where the database's schema stands against this build's migrations. */
export interface SchemaStatus {
  /** Migrations the database has applied, oldest first. */
  readonly applied: readonly string[];
  /** This build's migrations, oldest first; the last one is the version it needs. */
  readonly expected: readonly string[];
  /** This build's migrations not applied yet: a writer must not start while there are any. */
  readonly pending: readonly string[];
  /** Applied migrations this build does not know (a newer version migrated the database). */
  readonly unknown: readonly string[];
}

const appliedRows = z.array(z.object({ name: z.string() }));

/** Reads which migrations the database has applied; none when it was never migrated. */
export async function schemaStatus(pool: Pool, dir?: string): Promise<SchemaStatus> {
  const expected = await bundledMigrations(dir);
  const table = `public.${MIGRATIONS_TABLE}`;
  const exists = await pool.query("SELECT to_regclass($1) IS NOT NULL AS present", [table]);
  const present = z.array(z.object({ present: z.boolean() })).parse(exists.rows)[0]?.present ?? false;
  const applied = present
    ? appliedRows
        .parse((await pool.query(`SELECT name FROM ${table} ORDER BY run_on, id`)).rows)
        .map((r) => r.name)
    : [];
  return {
    applied,
    expected,
    pending: expected.filter((name) => !applied.includes(name)),
    unknown: applied.filter((name) => !expected.includes(name)),
  };
}

/**
 * What a command that writes results of record calls first: resolves when every migration of this build
 * is applied (a newer schema is fine: migrations only add), else throws SchemaOutdatedError, which tells
 * the user to run `invoice-relay db migrate`. `where` names the database in the message (the URL from
 * safeUrl: no credentials).
 */
export async function checkSchema(
  pool: Pool,
  options: { readonly where?: string; readonly dir?: string } = {},
): Promise<SchemaStatus> {
  const status = await schemaStatus(pool, options.dir);
  if (status.pending.length > 0)
    throw new SchemaOutdatedError(options.where ?? "RESULTS_DATABASE_URL", status.pending);
  return status;
}
