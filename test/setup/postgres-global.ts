import { existsSync } from "node:fs";
import pg from "pg";
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { PostgresServer } from "../support/postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A PostgreSQL server where tests may create databases (test/support/postgres.ts), if one was found. */
    postgresUrl: string | undefined;
    /** Why there is none: what a test that needs PostgreSQL fails with. */
    postgresProblem: string;
  }
}

interface Provided {
  readonly url: string;
  readonly source: string;
  stop(): Promise<void>;
}

function dockerMayAnswer(): boolean {
  return process.env["DOCKER_HOST"] !== undefined || existsSync("/var/run/docker.sock");
}

async function answers(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function fromTestcontainers(): Promise<Provided | undefined> {
  if (!dockerMayAnswer()) return undefined;
  try {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const container = await new PostgreSqlContainer("postgres:16-alpine").start();
    return {
      url: container.getConnectionUri(),
      source: "testcontainers",
      stop: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined; // no engine answered: fall through to a private server
  }
}

/**
 * PostgreSQL for the whole test run: TEST_DATABASE_URL or RESULTS_DATABASE_URL; a testcontainers
 * PostgreSQL when a Docker engine answers; else a private server from the machine's binaries (about 2 s
 * to start). None: the run goes on, and every test that needs PostgreSQL fails with the reason.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let provided: Provided | undefined;
  let problem = "";
  const fromEnv = [process.env["TEST_DATABASE_URL"], process.env["RESULTS_DATABASE_URL"]].find(
    (u) => u !== undefined && u !== "",
  );
  if (fromEnv !== undefined) {
    const why = await answers(fromEnv);
    if (why !== undefined)
      throw new Error(
        `TEST_DATABASE_URL/RESULTS_DATABASE_URL does not answer (${why}); start it or unset it.`,
      );
    provided = {
      url: fromEnv,
      source: "TEST_DATABASE_URL/RESULTS_DATABASE_URL",
      stop: () => Promise.resolve(),
    };
  }
  provided ??= await fromTestcontainers();
  if (provided === undefined) {
    try {
      const server = await PostgresServer.start();
      provided = {
        url: server.url,
        source: `private PostgreSQL (${server.dir})`,
        stop: () => server.dispose(),
      };
    } catch (error) {
      problem = `no PostgreSQL for the tests: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  const source =
    provided === undefined ? problem : `${provided.source} on port ${new URL(provided.url).port}`;
  process.stderr.write(`[tests] PostgreSQL: ${source}\n`);
  project.provide("postgresUrl", provided?.url);
  project.provide("postgresProblem", problem);
  return () => provided?.stop() ?? Promise.resolve();
}
