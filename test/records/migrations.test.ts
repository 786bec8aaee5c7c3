import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { SchemaOutdatedError } from "../../src/records/errors/schema-outdated-error.js";
import { bundledMigrations, migrate } from "../../src/records/migrations.js";
import { openPool, type Pool } from "../../src/records/pool.js";
import { checkSchema, schemaStatus } from "../../src/records/schema-version.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";

const TABLES = ["attempts", "batch_rows", "batches", "results"];
const opened: { db: TestDatabase; pool: Pool }[] = [];
afterEach(async () => {
  for (const { db, pool } of opened.splice(0)) {
    await pool.end();
    await db.drop();
  }
});

async function emptyDatabase(): Promise<Pool> {
  const db = await freshDatabase();
  const pool = await openPool(db.url);
  opened.push({ db, pool });
  return pool;
}

async function rows(pool: Pool, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await pool.query<Record<string, unknown>>(sql, params)).rows;
}

describe("the schema of the results of record", () => {
  it("when the migrations run on an empty database, then every table is there, and a second run applies nothing", async () => {
    const pool = await emptyDatabase();
    const expected = await bundledMigrations();
    expect(expected.length).toBeGreaterThan(1);

    expect(await migrate(pool, { logger: silentLogger() })).toEqual(expected);
    const tables = await rows(
      pool,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name = ANY($1) ORDER BY 1",
      [TABLES],
    );
    expect(tables.map((t) => t["table_name"])).toEqual(TABLES);

    expect(await migrate(pool, { logger: silentLogger() })).toEqual([]);
    expect(await schemaStatus(pool)).toEqual({ applied: expected, expected, pending: [], unknown: [] });
    await expect(checkSchema(pool)).resolves.toMatchObject({ pending: [] });
  });

  it("when only the first migration is applied, then checkSchema refuses with the command to run, until the rest is applied", async () => {
    const pool = await emptyDatabase();
    const [first, ...rest] = await bundledMigrations();
    expect(await migrate(pool, { logger: silentLogger(), count: 1 })).toEqual([first]);

    const refused = await checkSchema(pool, { where: "postgres://relay:***@db/relay" }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(SchemaOutdatedError);
    expect(refused).toMatchObject({ code: "SCHEMA_OUTDATED", pending: rest });
    expect(String(refused)).toContain("run `invoice-relay db migrate`");

    expect(await migrate(pool, { logger: silentLogger() })).toEqual(rest);
    await expect(checkSchema(pool)).resolves.toMatchObject({ pending: [] });
  });

  it("when a database was never migrated, then checkSchema names every migration as pending", async () => {
    const pool = await emptyDatabase();
    const pending = await bundledMigrations();
    await expect(checkSchema(pool)).rejects.toMatchObject({ code: "SCHEMA_OUTDATED", pending });
  });

  it("when the columns are read back, then times are timestamptz, keys uuid, counts integers, and nothing is a float", async () => {
    const pool = await emptyDatabase();
    await migrate(pool, { logger: silentLogger() });
    const columns = await rows(
      pool,
      `SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = ANY($1)`,
      [TABLES],
    );
    const typeOf = (table: string, column: string) =>
      columns.find((c) => c["table_name"] === table && c["column_name"] === column)?.["data_type"];

    expect(columns.length).toBeGreaterThan(30);
    expect(columns.filter((c) => /real|double|numeric|money/.test(String(c["data_type"])))).toEqual([]);
    const times = columns.filter((c) => String(c["column_name"]).endsWith("_at"));
    expect(times.length).toBeGreaterThanOrEqual(8);
    for (const c of times)
      expect(c, "every *_at column").toMatchObject({ data_type: "timestamp with time zone" });
    for (const table of ["results", "attempts", "batch_rows"])
      expect(typeOf(table, "idempotency_key"), table).toBe("uuid");
    expect(typeOf("results", "response_body")).toBe("jsonb");
    expect(typeOf("batches", "counts")).toBe("jsonb");
    expect(typeOf("results", "attempts")).toBe("integer");
    expect(typeOf("attempts", "duration_ms")).toBe("integer");
    expect(typeOf("attempts", "retry_after_ms")).toBe("bigint");
    expect(typeOf("batches", "size_bytes")).toBe("bigint");
    expect(typeOf("batches", "batch_id")).toBe("text");
  });

  it("when the lookups are planned, then results by external_id and by status and time, and batch rows and attempts by key, have indexes", async () => {
    const pool = await emptyDatabase();
    await migrate(pool, { logger: silentLogger() });
    const indexes = await rows(
      pool,
      "SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'public'",
    );
    const defs = indexes.map((i) => String(i["indexdef"]));
    const has = (table: string, columns: string) =>
      defs.some((d) => d.includes(`ON public.${table} USING btree (${columns})`));
    expect(has("results", "external_id")).toBe(true);
    expect(has("results", "status, last_attempt_at")).toBe(true);
    expect(has("batch_rows", "idempotency_key")).toBe(true);
    expect(has("attempts", "idempotency_key, attempt")).toBe(true);
    expect(has("batch_rows", "batch_id, line")).toBe(true);
  });

  it("when the same attempt is recorded twice, then the key and attempt number stay one row", async () => {
    const pool = await emptyDatabase();
    await migrate(pool, { logger: silentLogger() });
    const key = "6f1c3b8e-8a4b-5d2e-9f00-0123456789ab";
    const insert =
      "INSERT INTO attempts (idempotency_key, attempt, started_at, duration_ms, http_status) " +
      "VALUES ($1, 1, now(), 12, 503)";
    await pool.query(insert, [key]);
    await expect(pool.query(insert, [key])).rejects.toMatchObject({ code: "23505" });
    await pool.query(`${insert} ON CONFLICT (idempotency_key, attempt) DO NOTHING`, [key]);
    expect(await rows(pool, "SELECT count(*)::int AS n FROM attempts")).toEqual([{ n: 1 }]);
  });

  it("when a rejected row is recorded with a key, or a kept row without one, then the database refuses it", async () => {
    const pool = await emptyDatabase();
    await migrate(pool, { logger: silentLogger() });
    await pool.query(
      "INSERT INTO batches (batch_id, file, format, created_at, state) VALUES ('b1', 'a.csv', 'csv', now(), 'ingesting')",
    );
    const row =
      "INSERT INTO batch_rows (batch_id, line, idempotency_key, decision) VALUES ('b1', $1, $2, $3)";
    await pool.query(row, [2, null, "rejected"]);
    await pool.query(row, [3, "6f1c3b8e-8a4b-5d2e-9f00-0123456789ab", "new"]);
    await expect(
      pool.query(row, [4, "6f1c3b8e-8a4b-5d2e-9f00-0123456789ab", "rejected"]),
    ).rejects.toBeInstanceOf(pg.DatabaseError);
    await expect(pool.query(row, [5, null, "new"])).rejects.toMatchObject({ code: "23514" });
  });
});
