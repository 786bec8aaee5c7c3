import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { silentLogger } from "../../src/log/logger.js";
import { bundledMigrations, migrate, MIGRATION_LOCK } from "../../src/records/migrations.js";
import { openPool } from "../../src/records/pool.js";
import { finish, runCli } from "../support/cli-run.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { spawnNode, until } from "../support/processes.js";

const databases: TestDatabase[] = [];
afterEach(async () => {
  for (const db of databases.splice(0)) await db.drop();
});

async function database(): Promise<TestDatabase> {
  const db = await freshDatabase();
  databases.push(db);
  return db;
}

/** The same URL with a user and password: the test server trusts every login, so the password is only a marker. */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = "postgres";
  parsed.password = password;
  return parsed.toString();
}

describe("invoice-relay db", () => {
  it("when two `db migrate` run at once, then both exit 0 and each migration is applied exactly once", async () => {
    const db = await database();
    const env = { RESULTS_DATABASE_URL: db.url };
    // Hold the migration lock until both wait for it, so that they really run at once.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    const running = [
      finish(spawnNode("workers/cli.js", ["db", "migrate"], env)),
      finish(spawnNode("workers/cli.js", ["db", "migrate"], env)),
    ];
    const waiting = async () => {
      const { rows } = await holder.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database " +
          "WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()",
      );
      return rows[0]?.n === 2;
    };
    try {
      await until(waiting, 20_000, "both migrators to wait for the lock");
    } finally {
      await holder.end();
    }
    const [a, b] = await Promise.all(running);
    if (a === undefined || b === undefined) throw new Error("two migrators were started");
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    const expected = await bundledMigrations();
    const appliedLines = `${a.output}${b.output}`.split("\n").filter((l) => l.startsWith("applied "));
    expect(appliedLines.sort()).toEqual(expected.map((name) => `applied ${name}`).sort());
    expect(`${a.output}${b.output}`).toContain("nothing to apply");

    const pool = await openPool(db.url);
    try {
      const { rows } = await pool.query<{ name: string; n: number }>(
        "SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name ORDER BY name",
      );
      expect(rows).toEqual(expected.map((name) => ({ name, n: 1 })));
    } finally {
      await pool.end();
    }

    const again = await runCli(["db", "migrate"], env);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain("nothing to apply");
  });

  it("when the schema lacks a migration, then `db status` exits 1 with the command to run, and 0 once it is migrated", async () => {
    const db = await database();
    const pool = await openPool(db.url);
    try {
      await migrate(pool, { logger: silentLogger(), count: 1 });
    } finally {
      await pool.end();
    }
    const [first, ...pending] = await bundledMigrations();
    const env = { RESULTS_DATABASE_URL: withPassword(db.url, "status-pw-Q7x2") };

    const old = await runCli(["db", "status"], env);
    expect(old.code, old.output).toBe(1);
    expect(old.output).toContain(`applied:  ${first}`);
    expect(old.output).toContain(`pending:  ${pending.join(", ")}`);
    expect(old.output).toContain("run `invoice-relay db migrate`");
    expect(old.output).toContain("postgres:***@");
    expect(old.output).not.toContain("status-pw-Q7x2");

    const migrated = await runCli(["db", "migrate"], env);
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toContain(`applied ${pending.at(-1) ?? ""}`);

    const current = await runCli(["db", "status"], env);
    expect(current.code, current.output).toBe(0);
    expect(current.output).toContain("the schema is current");
  });

  it("when the database cannot be reached, then `db migrate` and `db status` exit 1 with a message that never holds the password", async () => {
    const password = "unreachable-pw-Zk81";
    const url = `postgres://relay:${password}@127.0.0.1:${await freePort()}/relay`;
    for (const command of ["migrate", "status"]) {
      const result = await runCli(["db", command], { RESULTS_DATABASE_URL: url, LOG_LEVEL: "debug" });
      expect(result.code, result.output).toBe(1);
      expect(result.output).toContain("unreachable");
      expect(result.output).toContain("postgres://relay:***@127.0.0.1:");
      expect(result.output).not.toContain(password);
    }
  });

  it("when RESULTS_DATABASE_URL is not a postgres:// URL, then the command exits 1 without quoting it", async () => {
    const result = await runCli(["db", "status"], {
      RESULTS_DATABASE_URL: "mysql://relay:bad-scheme-pw-3v@db/relay",
    });
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain("RESULTS_DATABASE_URL must be a postgres:// or postgresql:// URL");
    expect(result.output).not.toContain("bad-scheme-pw-3v");
  });

  it("when RESULTS_DATABASE_URL is not set, then the command exits 1 and says which setting it needs", async () => {
    const result = await runCli(["db", "migrate"], {});
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain("RESULTS_DATABASE_URL is not set");
  });
});
