import { copyFile, mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { runCli } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { freshDatabase, type TestDatabase } from "../support/postgres.js";
import { testPrefix } from "../support/redis.js";
import { leakedSecrets, secretUrlArb, type SecretUrl } from "../support/url-secrets.js";
import { cliEnv } from "../support/cli-env.js";

/**
 * For URLs with generated secrets in every credential position, the real CLI's output (stdout and
 * stderr, debug logging on) holds none of them, whatever the command and whether the server answers.
 */

// A few cases per command, each a CLI process of its own, run side by side (most of a case is waiting for
// a server that does not answer); a failure is reported as found (shrinking would start dozens more
// processes).
const RUNS = 3;

let db: TestDatabase;
let dropDir: string;
let closedPort: number;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  db = await freshDatabase();
  cleanups.push(() => db.drop());
  const drop = await tempDropDir();
  cleanups.push(drop.cleanup);
  dropDir = drop.dir;
  await writeFile(join(dropDir, "u.csv"), [CSV_HEADER, csvRow("U-1"), ""].join("\n"));
  closedPort = await freePort();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Each run its own deployment (prefix) and so its own drop folder: one deployment per drop folder. */
function env(extra: Record<string, string>, drop: string): Record<string, string> {
  return cliEnv(
    {
      apiUrl: "http://127.0.0.1:9",
      apiKey: "irs_live_url_secrets_test_key",
      queuePrefix: testPrefix(),
      dropDir: drop,
    },
    { LOG_LEVEL: "debug", ...extra },
  );
}

/** A drop folder holding the one file of the shared one. */
async function dropFolderOfItsOwn(): Promise<string> {
  const dir = await mkdtemp(join(dropDir, "deployment-"));
  await copyFile(join(dropDir, "u.csv"), join(dir, "u.csv"));
  return dir;
}

/** A database URL with secrets: the test server (which trusts every login) or a closed port. */
const databaseUrl = (reachable: boolean) => {
  const server = new URL(db.url);
  return secretUrlArb(
    "postgres",
    decodeURIComponent(server.username) || "postgres",
    reachable ? server.host : `127.0.0.1:${closedPort}`,
    server.pathname,
  );
};

async function expectNoLeak(
  args: readonly string[],
  extra: (u: SecretUrl) => Record<string, string>,
  arb: fc.Arbitrary<SecretUrl>,
  expected: RegExp,
): Promise<void> {
  const cases = fc.array(arb, { minLength: RUNS, maxLength: RUNS });
  await fc.assert(
    fc.asyncProperty(cases, async (urls) => {
      const results = await Promise.all(
        urls.map(async (u) => runCli(args, env(extra(u), await dropFolderOfItsOwn()))),
      );
      urls.forEach((u, i) => {
        const output = results[i]?.output ?? "";
        expect(output, `${args.join(" ")} with ${u.url}`).toMatch(expected);
        expect(leakedSecrets(output, u.secrets), `${args.join(" ")} with ${u.url}:\n${output}`).toEqual([]);
      });
    }),
    { numRuns: 1, endOnFailure: true },
  );
}

describe("secrets in the URLs of the settings", () => {
  it("when db status meets RESULTS_DATABASE_URL with a password in any position, then it names the database without one", async () => {
    await expectNoLeak(
      ["db", "status"],
      (u) => ({ RESULTS_DATABASE_URL: u.url }),
      databaseUrl(true),
      /migration/,
    );
  });

  it("when db status cannot reach RESULTS_DATABASE_URL, then the unreachable error holds no password", async () => {
    await expectNoLeak(
      ["db", "status"],
      (u) => ({ RESULTS_DATABASE_URL: u.url }),
      databaseUrl(false),
      /is unreachable or refused the connection/,
    );
  });

  it("when status shows the results database, answering or not, then it shows no password", async () => {
    await expectNoLeak(
      ["status"],
      (u) => ({ RESULTS_DATABASE_URL: u.url }),
      fc.oneof(databaseUrl(true), databaseUrl(false)),
      /results database/,
    );
  });

  it("when results cannot reach RESULTS_DATABASE_URL, then its error holds no password", async () => {
    await expectNoLeak(
      ["results"],
      (u) => ({ RESULTS_DATABASE_URL: u.url }),
      databaseUrl(false),
      /is unreachable or refused the connection/,
    );
  });

  it("when run cannot reach RESULTS_DATABASE_URL, then it exits with an error that holds no password", async () => {
    await expectNoLeak(
      ["run", "--deadline", "4s"],
      (u) => ({ RESULTS_DATABASE_URL: u.url }),
      databaseUrl(false),
      /is unreachable or refused the connection/,
    );
  });

  it("when status cannot reach REDIS_URL with a password in any position, then the error holds none", async () => {
    await expectNoLeak(
      ["status"],
      (u) => ({ REDIS_URL: u.url }),
      secretUrlArb("redis", "default", `127.0.0.1:${closedPort}`, "/0"),
      /Redis at .* is unreachable/,
    );
  });

  it("when REDIS_URL is refused by the configuration, then the quoted value holds no password", async () => {
    const wrongScheme = secretUrlArb("redis", "default", "127.0.0.1:6379", "/0").map((u) => ({
      ...u,
      url: u.url.replace(/^redis:/, "redis+tls:"),
    }));
    await expectNoLeak(
      ["status"],
      (u) => ({ REDIS_URL: u.url }),
      wrongScheme,
      /REDIS_URL must be a redis:\/\//,
    );
  });

  it("when REDIS_CLUSTER_NODES carry a password and cannot be reached, then the error holds none", async () => {
    const nodes = secretUrlArb("redis", "default", `127.0.0.1:${closedPort}`, "").map((u) => ({
      ...u,
      url: `${u.url},${u.url.replace(String(closedPort), String(closedPort + 1))}`,
    }));
    await expectNoLeak(
      ["status"],
      (u) => ({ REDIS_CLUSTER_NODES: u.url, QUEUE_PREFIX: `{${testPrefix()}}` }),
      nodes,
      /REDIS_CLUSTER_NODES/,
    );
  });
});
