import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisServer } from "../../src/dev/redis-server.js";
import { createRedis } from "../../src/queue/connection.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { startSimulator, type Attempt, type SimulatorHandle } from "../../src/simulator/index.js";
import { cliEnv } from "../support/cli-env.js";
import { enqueueBatch, testConfig } from "../support/engine.js";
import { testInvoices, type KeyedInvoice } from "../support/invoices.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";

const API_KEY = "irs_live_test_key_0123456789";
/** However slow the machine: these tests check what happens, not how fast. */
const FINISH_WITHIN_MS = 150_000;
const TEST_TIMEOUT_MS = 180_000;
let redis: RedisServer;
let sim: SimulatorHandle;
let client: Redis;

beforeAll(async () => {
  redis = await RedisServer.start({ aof: true });
  sim = await startSimulator({ apiKey: API_KEY, seed: 11, latencyMs: { min: 2, max: 15 } });
  client = createRedis(redis.url, "producer");
});
afterAll(async () => {
  client.disconnect();
  await sim.close();
  await redis.dispose();
});

/** Counts, per key, the effects the service commits from now on; `stop` ends the count. */
function countEffects(): { readonly perKey: Map<string, number>; stop(): void } {
  const perKey = new Map<string, number>();
  const onAttempt = (attempt: Attempt) => {
    const key = attempt.idempotencyKey;
    if (attempt.outcome === "effect" && key !== undefined) perKey.set(key, (perKey.get(key) ?? 0) + 1);
  };
  sim.events.on("attempt", onAttempt);
  return { perKey, stop: () => sim.events.off("attempt", onAttempt) };
}

/**
 * Does `act` at the moment the service admits the `nth` new request, before its answer is written, and
 * gives that request's key: an invoice in flight when `act` happened, whatever the machine's speed.
 */
function whenAdmitted(nth: number, worker: Spawned, act: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let admitted = 0;
    const onAdmitted = (key: string) => {
      if (++admitted < nth) return;
      stop();
      act();
      resolve(key);
    };
    const ended = () => {
      stop();
      reject(new Error(`the worker ended before the service admitted ${nth} invoices:\n${worker.output()}`));
    };
    const stop = () => {
      sim.events.off("in-flight", onAdmitted);
      worker.child.off("exit", ended);
    };
    sim.events.on("in-flight", onAdmitted);
    worker.child.once("exit", ended);
  });
}

/** The keys of `invoices` that did not take effect exactly once. */
function notOnce(invoices: readonly KeyedInvoice[], perKey: ReadonlyMap<string, number>): string[] {
  return invoices.filter((inv) => perKey.get(inv.key) !== 1).map((inv) => inv.key);
}

async function statusOf(store: RedisLedger, key: string): Promise<string | undefined> {
  return (await store.get(key))?.status;
}

describe("a worker killed mid-batch", () => {
  it(
    "when a worker is killed with SIGKILL while an invoice is in flight and a new one started, then every invoice ends succeeded and took effect exactly once, the one in flight included",
    async () => {
      const prefix = `crash-${randomUUID()}`;
      const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, redisUrl: redis.url, prefix });
      const invoices = testInvoices(1500, prefix);
      await enqueueBatch(config, "b1", invoices);
      const env = cliEnv(
        { redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix },
        { LOCK_DURATION_MS: "2000", BACKOFF_BASE_MS: "50", BACKOFF_CAP_MS: "500" },
      );
      const store = new RedisLedger(client, prefix);
      const effects = countEffects();
      try {
        const first = spawnNode("workers/submit-worker.js", [], env);
        const inFlight = await whenAdmitted(300, first, () => first.child.kill("SIGKILL"));
        expect((await first.exited).signal).toBe("SIGKILL");
        // its answer never reached the dead worker: the ledger still waits for it
        expect(await statusOf(store, inFlight)).toMatch(/^(queued|retrying)$/);

        const second = spawnNode("workers/submit-worker.js", [], env);
        try {
          await until(
            async () => (await store.counts()).succeeded === invoices.length,
            FINISH_WITHIN_MS,
            "every invoice succeeded",
          );
        } finally {
          second.child.kill("SIGTERM");
          await second.exited;
        }
        expect(await store.counts()).toEqual({
          queued: 0,
          retrying: 0,
          succeeded: invoices.length,
          failed: 0,
          superseded: 0,
        });
        expect(await statusOf(store, inFlight)).toBe("succeeded");
        expect(notOnce(invoices, effects.perKey)).toEqual([]);
        expect(effects.perKey.size).toBe(invoices.length);
      } finally {
        effects.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "when a worker gets SIGTERM while an invoice is in flight, then it finishes that invoice and exits 0, and a restart finishes the batch: every invoice succeeded, each took effect exactly once",
    async () => {
      const prefix = `term-${randomUUID()}`;
      const config = testConfig({ apiUrl: sim.url, apiKey: API_KEY, redisUrl: redis.url, prefix });
      const invoices = testInvoices(800, prefix);
      await enqueueBatch(config, "b1", invoices);
      const env = cliEnv({ redisUrl: redis.url, apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix });
      const store = new RedisLedger(client, prefix);
      const effects = countEffects();
      try {
        const first = spawnNode("workers/submit-worker.js", [], { ...env, SHUTDOWN_GRACE_MS: "60000" });
        const inFlight = await whenAdmitted(100, first, () => first.child.kill("SIGTERM"));
        expect((await first.exited).code).toBe(0);
        // stopped, not abandoned: the invoice in flight was answered and recorded before the exit
        expect(await statusOf(store, inFlight)).toBe("succeeded");

        const second = spawnNode("workers/submit-worker.js", [], env);
        try {
          await until(
            async () => (await store.counts()).succeeded === invoices.length,
            FINISH_WITHIN_MS,
            "every invoice succeeded",
          );
        } finally {
          second.child.kill("SIGTERM");
          await second.exited;
        }
        expect(await store.counts()).toEqual({
          queued: 0,
          retrying: 0,
          succeeded: invoices.length,
          failed: 0,
          superseded: 0,
        });
        expect(notOnce(invoices, effects.perKey)).toEqual([]);
        expect(effects.perKey.size).toBe(invoices.length);
        // the restart did not send it again: its one request is all the service saw of it
        expect(sim.attempts(inFlight)).toHaveLength(1);
      } finally {
        effects.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
