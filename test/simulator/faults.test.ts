import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import type { SimulatorHandle } from "../../src/simulator/index.js";
import { header, invoice, json, problemOf, submit, successSchema } from "./support/client.js";
import { simulatorsPerTest } from "./support/simulators.js";

const start = simulatorsPerTest();

/** Statuses of `keys` submitted one after another; a lost answer shows as "lost". */
async function statuses(sim: SimulatorHandle, keys: readonly string[]): Promise<(number | "lost")[]> {
  const out: (number | "lost")[] = [];
  for (const key of keys) {
    out.push(
      await submit(sim, { key }).then(
        (a) => a.status,
        () => "lost" as const,
      ),
    );
  }
  return out;
}

describe("injected faults", () => {
  it("when every request fails with 503 for a while (an outage, no Retry-After) and then the service heals, then only the healthy attempt has an effect", async () => {
    const sim = await start({ errorRate: 1, retryAfterSeconds: 3 });
    const key = randomUUID();
    const body = JSON.stringify(invoice());

    const failures = [await submit(sim, { key, body }), await submit(sim, { key, body })];
    sim.setFaults({ errorRate: 0 });
    const healed = await submit(sim, { key, body });

    for (const failure of failures) {
      expect(failure.status).toBe(503);
      // an outage says no time to come back: a 503 with Retry-After is a service shedding load
      expect(header(failure, "retry-after")).toBeUndefined();
      expect(problemOf(failure).type).toMatch(/service-unavailable$/);
    }
    expect(healed.status).toBe(201);
    expect(header(healed, "idempotent-replayed")).toBeUndefined();
    expect(sim.stats()).toMatchObject({
      requests: { total: 3, byStatus: { "201": 1, "503": 2 } },
      effects: { total: 1 },
      faults: { error: 2, throttle: 0, lost: 0 },
    });
  });

  it("when the service throttles, then 429 carries Retry-After and there is no effect", async () => {
    const sim = await start({ throttleRate: 1, retryAfterSeconds: 7 });
    const answer = await submit(sim);
    expect(answer.status).toBe(429);
    expect(header(answer, "retry-after")).toBe("7");
    expect(problemOf(answer).type).toMatch(/too-many-requests$/);
    expect(sim.stats()).toMatchObject({ effects: { total: 0 }, faults: { throttle: 1 } });
  });

  it("when an answer is lost, then the effect is committed once and the client's retry gets the replay", async () => {
    const sim = await start({ lostRate: 1 });
    const key = randomUUID();
    const body = JSON.stringify(invoice());

    await expect(submit(sim, { key, body })).rejects.toThrow();
    expect(sim.stats()).toMatchObject({ effects: { total: 1 }, faults: { lost: 1 }, requests: { total: 1 } });
    expect(sim.stats().requests.byStatus).toEqual({});

    sim.setFaults({ lostRate: 0 });
    const retry = await submit(sim, { key, body });

    expect(retry.status).toBe(201);
    expect(header(retry, "idempotent-replayed")).toBe("true");
    expect(successSchema.parse(json(retry)).idempotency_key).toBe(key);
    expect(sim.stats()).toMatchObject({ effects: { total: 1, distinctKeys: 1 }, replays: 1 });
    expect(sim.attempts(key).map((a) => [a.outcome, a.lost])).toEqual([
      ["effect", true],
      ["replay", false],
    ]);
  });

  it("when two simulators share a seed, then the same keys meet the same faults, whatever the order", async () => {
    const faults = { seed: 42, errorRate: 0.3, throttleRate: 0.2, lostRate: 0.1 };
    const [a, b] = [await start(faults), await start(faults)];
    const keys = Array.from({ length: 60 }, () => randomUUID());

    const inOrder = await statuses(a, keys);
    const reversed = (await statuses(b, [...keys].reverse())).reverse();

    expect(reversed).toEqual(inOrder);
    expect(new Set(inOrder)).toEqual(new Set([201, 503, 429, "lost"]));
  });

  it("when the seed differs, then the faults fall on other keys", async () => {
    const keys = Array.from({ length: 40 }, () => randomUUID());
    const a = await statuses(await start({ seed: 1, errorRate: 0.5 }), keys);
    const b = await statuses(await start({ seed: 2, errorRate: 0.5 }), keys);
    expect(b).not.toEqual(a);
  });

  it("when a key is retried under a fault rate, then each attempt gets a fresh draw and it eventually succeeds", async () => {
    const sim = await start({ seed: 7, errorRate: 0.5 });
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    let answer = await submit(sim, { key, body });
    for (let attempt = 1; answer.status === 503 && attempt < 30; attempt++)
      answer = await submit(sim, { key, body });
    expect(answer.status).toBe(201);
    expect(sim.stats().effects.total).toBe(1);
  });

  it("when latency is set, then the answer waits at least that long", async () => {
    const sim = await start({ latencyMs: { min: 120, max: 150 } });
    const started = performance.now();
    const answer = await submit(sim);
    expect(answer.status).toBe(201);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  it("when the API key is wrong and is then fixed, then requests are refused and then accepted", async () => {
    const sim = await start({ apiKey: "irs_live_right" });
    const key = randomUUID();
    const body = JSON.stringify(invoice());

    sim.setApiKey("irs_live_rotated");
    const refused = await submit(sim, { key, body, apiKey: "irs_live_right" });
    sim.setApiKey("irs_live_right");
    const accepted = await submit(sim, { key, body, apiKey: "irs_live_right" });

    expect(refused.status).toBe(401);
    expect(accepted.status).toBe(201);
    expect(sim.attempts(key).map((a) => [a.status, a.authorized])).toEqual([
      [401, false],
      [201, true],
    ]);
  });

  it("when faults are invalid, then setFaults throws and names the problem, leaving the faults as they were", () =>
    start({ errorRate: 0.5 }).then((sim) => {
      expect(() => sim.setFaults({ errorRate: 2 })).toThrow(/errorRate must be a number from 0 to 1/);
      expect(() => sim.setFaults({ throttleRate: 0.6 })).toThrow(/must not exceed 1/);
      expect(() => sim.setFaults({ latencyMs: { min: 9, max: 1 } })).toThrow(/min must not exceed/);
      expect(sim.faults()).toMatchObject({ errorRate: 0.5, throttleRate: 0 });
    }));

  it("when the client gives up while the answer waits out its latency, then the effect still happens and a retry gets the replay", async () => {
    const sim = await start({ latencyMs: { min: 300, max: 300 } });
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    const attempted = once(sim.events, "attempt");
    const client = new AbortController();
    const inFlight = once(sim.events, "in-flight");
    const first = submit(sim, { key, body, signal: client.signal });
    await inFlight;
    client.abort(); // as a client-side request timeout would

    await expect(first).rejects.toThrow();
    await attempted;
    sim.setFaults({ latencyMs: { min: 0, max: 0 } });
    const retry = await submit(sim, { key, body });

    expect(retry.status).toBe(201);
    expect(header(retry, "idempotent-replayed")).toBe("true");
    expect(sim.stats().effects).toMatchObject({ total: 1, distinctKeys: 1 });
  });

  it("when the simulator closes while an answer waits out its latency, then close is prompt and the request has no effect", async () => {
    const sim = await start({ latencyMs: { min: 5000, max: 5000 } });
    const inFlight = once(sim.events, "in-flight");
    const pending = submit(sim);
    await inFlight;
    const started = performance.now();
    await sim.close();
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(pending).rejects.toThrow();
    expect(sim.stats().effects.total).toBe(0);
  });
});
