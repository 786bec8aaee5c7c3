import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { runCli } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { tempDropDir } from "../support/drop.js";
import { startSilentPostgres } from "../support/silent-postgres.js";

const API_KEY = "irs_live_e2e_key_0123456789";
const DEADLINE_MS = 2_000;
const GRACE_MS = 500;
/** Generous: the hard stop comes at the deadline, the grace and the closing bound; a margin on top. */
const LIMIT_MS = DEADLINE_MS + GRACE_MS + CLOSING_BOUND_MS + 15_000;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY, seed: 4 });
});
afterAll(async () => {
  await sim.close();
});
const cleanups = cleanupsAfterEach();

describe("a PostgreSQL that takes the connection and never answers", () => {
  it.each([
    ["comes while run checks it at start", `${DEADLINE_MS}ms`],
    ["has come before run checks it (a start-up as long as the deadline)", "1ms"],
  ])(
    "when the deadline %s, then run ends by its deadline, exit 1, naming PostgreSQL, not by its hard stop",
    async (_when, deadline) => {
      const drop = await tempDropDir();
      cleanups.push(drop.cleanup);
      const silent = await startSilentPostgres();
      cleanups.push(() => silent.close());
      const env = cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, name: "silent-pg", dropDir: drop.dir },
        { SHUTDOWN_GRACE_MS: String(GRACE_MS), RESULTS_DATABASE_URL: silent.url },
      );
      const result = await runCli(["run", "--deadline", deadline], env, LIMIT_MS);
      expect(result.code, result.output).toBe(1);
      expect(result.output).toMatch(
        /PostgreSQL at \S*127\.0\.0\.1:\d+\S* is unreachable [^\n]*did not answer before the pass's --deadline/,
      );
      expect(result.output).not.toMatch(/still not done/); // the hard stop's words
    },
    LIMIT_MS + 10_000,
  );
});
