import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { CSV_HEADER, csvRow } from "../support/bad-inputs.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { finish } from "../support/cli-run.js";
import { tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";

const API_KEY = "irs_live_unanswered_key_0123456789";
const GRACE_MS = 2000;
/** Long enough for a run on a busy machine to start sending before it passes. */
const DEADLINE_MS = 6000;
/** Room for a busy machine to log and close, as in worker-stop-redis-away.test.ts; far below a hang. */
const SLACK_MS = 10_000;
/** A run must have ended this long after it started: its deadline, its grace and the slack. */
const RUN_ENDS_WITHIN_MS = DEADLINE_MS + GRACE_MS + SLACK_MS;
/** A stopped worker must have ended this long after SIGTERM: its grace and the slack. */
const STOP_ENDS_WITHIN_MS = GRACE_MS + SLACK_MS;
/** A request the service never answers: far beyond every limit above, and beyond REQUEST_TIMEOUT_MS (30 s). */
const NEVER_ANSWERED_MS = 600_000;
/** Enough invoices that some are still queued, and some in flight, when the night is cut short. */
const ROWS = 400;

const cleanups = cleanupsAfterEach();

interface Night {
  readonly redis: RedisServer;
  readonly sim: SimulatorHandle;
  readonly env: Record<string, string>;
  readonly file: string;
}

async function night(name: string): Promise<Night> {
  const redis = await RedisServer.start();
  // Some latency, so that requests are in flight whenever the night is cut short.
  const sim = await startSimulator({ apiKey: API_KEY, seed: 5, latencyMs: { min: 100, max: 200 } });
  const drop = await tempDropDir();
  cleanups.push(
    async () => {
      // A frozen Redis takes no SIGTERM until it runs again.
      if (redis.pid !== undefined) process.kill(redis.pid, "SIGCONT");
      await redis.dispose();
    },
    () => sim.close(),
    drop.cleanup,
  );
  const file = join(drop.dir, "night.csv");
  const rows = Array.from({ length: ROWS }, (_, i) => csvRow(`UNANSWERED-${i + 1}`));
  await writeFile(file, [CSV_HEADER, ...rows, ""].join("\n"));
  const env = cliEnv(
    { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, name, dropDir: drop.dir },
    { SHUTDOWN_GRACE_MS: String(GRACE_MS), SUBMIT_CONCURRENCY: "8", LOG_LEVEL: "info" },
  );
  return { redis, sim, env, file };
}

function started(proc: Spawned): Spawned {
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

const sending = (sim: SimulatorHandle) => () => Promise.resolve(sim.stats().effects.total >= 20);

describe("a night cut short while Redis or the service does not answer", () => {
  it("when Redis freezes (connections open, nothing answered) while run --deadline is submitting, then run ends by itself by its deadline, grace and closing bound, exit 1, naming Redis as what did not answer", async () => {
    const { redis, sim, env } = await night("frozen-redis");
    const run = started(spawnNode("workers/cli.js", ["run", "--deadline", `${DEADLINE_MS / 1000}s`], env));
    await until(sending(sim), 30_000, "invoices to be sent");
    // SIGSTOP, as a host paused or swapping, a VM suspended, a network path that drops packets silently.
    if (redis.pid !== undefined) process.kill(redis.pid, "SIGSTOP");
    // Nothing fails while Redis is frozen: only the hard stop after the closing's own bound ends it.
    const within = RUN_ENDS_WITHIN_MS + CLOSING_BOUND_MS;
    const ended = await finish(run, within);
    expect(
      ended.signal,
      `still running ${within} ms after it started:\n${ended.output.slice(-3000)}`,
    ).toBeNull();
    expect(ended.code).toBe(1);
    // What did not answer is named, not guessed.
    expect(ended.output).toMatch(
      /still not done \d+ s after it started[^\n]*what it waits for does not answer: Redis at [^\n]*commands unanswered/,
    );
  }, 120_000);

  it("when the service stops answering while run --deadline is submitting, then run exits 1 by its deadline and grace, not once its requests time out", async () => {
    const { sim, env } = await night("hung-service-run");
    const run = started(spawnNode("workers/cli.js", ["run", "--deadline", `${DEADLINE_MS / 1000}s`], env));
    await until(sending(sim), 30_000, "invoices to be sent");
    sim.setFaults({ latencyMs: { min: NEVER_ANSWERED_MS, max: NEVER_ANSWERED_MS } });
    const ended = await finish(run, RUN_ENDS_WITHIN_MS);
    expect(
      ended.signal,
      `still running ${RUN_ENDS_WITHIN_MS} ms after it started:\n${ended.output.slice(-3000)}`,
    ).toBeNull();
    expect(ended.code).toBe(1);
    expect(ended.output).toMatch(/deadline passed[^\n]*the next run continues them/);
  }, 60_000);

  for (const command of ["worker", "start"] as const) {
    it(`when the service stops answering and a busy ${command} is sent SIGTERM, then it ends within its grace, leaving the requests unanswered to the next process`, async () => {
      const { sim, env, file } = await night(`hung-service-${command}`);
      // `worker` is fed by an `ingest` of the file; `start` takes it from its drop folder itself.
      if (command === "worker") {
        const ingest = await finish(spawnNode("workers/cli.js", ["ingest", file], env));
        expect(ingest.code, ingest.output).toBe(0);
      }
      const proc = started(spawnNode("workers/cli.js", [command], env));
      await until(sending(sim), 30_000, "invoices to be sent");
      sim.setFaults({ latencyMs: { min: NEVER_ANSWERED_MS, max: NEVER_ANSWERED_MS } });
      // Requests in flight that will not be answered.
      await until(() => Promise.resolve(sim.stats().inFlight >= 1), 10_000, "a request to hang");
      proc.child.kill("SIGTERM");
      const ended = await finish(proc, STOP_ENDS_WITHIN_MS);
      expect(
        ended.signal,
        `still running ${STOP_ENDS_WITHIN_MS} ms after SIGTERM:\n${ended.output.slice(-3000)}`,
      ).toBeNull();
      expect(ended.code).toBe(0);
    }, 60_000);
  }
});
