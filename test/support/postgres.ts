import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** A database of its own for one test, on the run's PostgreSQL (test/setup/postgres-global.ts). */
export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** The run's PostgreSQL server, or a loud failure naming why there is none and how to get one. */
export function postgresServerUrl(): string {
  const url = inject("postgresUrl");
  if (url === undefined) throw new Error(inject("postgresProblem") || "no PostgreSQL for the tests");
  return url;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresServerUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database with a random name; `drop` removes it (and ends its connections). */
export async function freshDatabase(): Promise<TestDatabase> {
  const name = `relay_test_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresServerUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
