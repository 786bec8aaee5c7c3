import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Agent, get } from "node:http";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  DEMO_API_KEY,
  SimulatorOptionsError,
  simulatorStatsSchema,
  startSimulator,
  type SimulatorHandle,
} from "../../src/simulator/index.js";
import { header, invoice, json, problemOf, send, submit } from "./support/client.js";
import { simulatorsPerTest } from "./support/simulators.js";

const start = simulatorsPerTest();

const attemptsSchema = z.object({
  key: z.string(),
  effects: z.number(),
  logDropped: z.number(),
  attempts: z.array(
    z.strictObject({
      at: z.iso.datetime(),
      status: z.number(),
      outcome: z.string(),
      lost: z.boolean(),
      idempotencyKey: z.string().nullable(),
      bodySha256: z.string().nullable(),
      authorized: z.boolean(),
      traceparent: z.string().nullable(),
    }),
  ),
});

async function stats(sim: SimulatorHandle) {
  return simulatorStatsSchema.parse(json(await send(`${sim.url}/__sim/stats`, "GET")));
}

describe("/__sim control routes", () => {
  it("when a mix of requests was served, then GET /__sim/stats counts statuses, effects, replays and conflicts", async () => {
    const sim = await start();
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    await submit(sim, { key, body });
    await submit(sim, { key, body });
    await submit(sim, { key, body: JSON.stringify(invoice()) });
    await submit(sim, { apiKey: "wrong" });
    await submit(sim, { key: "nope" });

    const over = await stats(sim);

    expect(over).toEqual(sim.stats());
    expect(over).toMatchObject({
      requests: { total: 5, byStatus: { "201": 2, "400": 1, "401": 1, "422": 1 } },
      effects: { total: 1, distinctKeys: 1, keysWithMultipleEffects: 0, multipleEffectKeys: [] },
      replays: 1,
      keyReuseRejections: 1,
      inFlightConflicts: 0,
      inFlight: 0,
      faults: { error: 0, throttle: 0, lost: 0 },
    });
  });

  it("when the attempts of a key are asked for, then they come in order with body hashes and no credential", async () => {
    const sim = await start();
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    await submit(sim, { key, body, apiKey: "irs_live_wrong_key" });
    await submit(sim, { key, body });
    await submit(sim, { key, body });

    const answer = await send(`${sim.url}/__sim/requests?key=${key.toUpperCase()}`, "GET");
    const log = attemptsSchema.parse(json(answer));

    expect(log.key).toBe(key);
    expect(log.effects).toBe(1);
    expect(log.attempts.map((a) => [a.status, a.outcome, a.authorized])).toEqual([
      [401, "rejected", false],
      [201, "effect", true],
      [201, "replay", true],
    ]);
    expect(new Set(log.attempts.map((a) => a.bodySha256)).size).toBe(1);
    expect(answer.text).not.toContain("irs_live_wrong_key");
    expect(answer.text).not.toContain(DEMO_API_KEY);
  });

  it("when attempts carry a traceparent, then the request log keeps each as received, and none where none came", async () => {
    const sim = await start();
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    const first = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const second = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00";
    await submit(sim, { key, body, headers: { traceparent: first } });
    await submit(sim, { key, body, headers: { traceparent: second } });
    await submit(sim, { key, body });

    const log = attemptsSchema.parse(json(await send(`${sim.url}/__sim/requests?key=${key}`, "GET")));

    expect(log.attempts.map((a) => a.traceparent)).toEqual([first, second, null]);
  });

  it("when /__sim/requests is asked without a UUID key, then 400", async () => {
    const sim = await start();
    expect((await send(`${sim.url}/__sim/requests`, "GET")).status).toBe(400);
    expect((await send(`${sim.url}/__sim/requests?key=abc`, "GET")).status).toBe(400);
  });

  it("when the request log is full, then the oldest attempts are dropped and memory stays bounded", async () => {
    const sim = await start({ requestLogCapacity: 3 });
    const first = randomUUID();
    await submit(sim, { key: first });
    for (let i = 0; i < 4; i++) await submit(sim);
    expect(sim.attempts(first)).toEqual([]);
    expect(sim.stats().requestLog).toEqual({ capacity: 3, dropped: 2 });
  });

  it("when faults are posted to /__sim/faults, then they apply to the next request", async () => {
    const sim = await start();
    const changed = await send(
      `${sim.url}/__sim/faults`,
      "POST",
      { "content-type": "application/json" },
      JSON.stringify({ throttleRate: 1, retryAfterSeconds: 2 }),
    );
    expect(changed.status).toBe(200);
    expect(json(changed)).toMatchObject({ faults: { throttleRate: 1, retryAfterSeconds: 2, errorRate: 0 } });
    const answer = await submit(sim);
    expect(answer.status).toBe(429);
    expect(header(answer, "retry-after")).toBe("2");
  });

  it("when invalid faults are posted, then 422 names the problem and nothing changes", async () => {
    const sim = await start();
    const post = (body: string) =>
      send(`${sim.url}/__sim/faults`, "POST", { "content-type": "application/json" }, body);
    const tooHigh = await post(JSON.stringify({ lostRate: 1.5 }));
    const unknown = await post(JSON.stringify({ chaos: true }));
    expect(tooHigh.status).toBe(422);
    expect(problemOf(tooHigh).detail).toMatch(/lostRate/);
    expect(problemOf(unknown).detail).toMatch(/chaos/);
    expect((await post("{")).status).toBe(400);
    expect(sim.faults().lostRate).toBe(0);
  });

  it("when /__sim/reset is posted, then everything recorded is gone and the start faults and key are back", async () => {
    const sim = await start({ throttleRate: 0.25 });
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    sim.setFaults({ throttleRate: 0 });
    await submit(sim, { key, body });
    sim.setApiKey("irs_live_other");

    const reset = await send(`${sim.url}/__sim/reset`, "POST");

    expect(reset.status).toBe(204);
    expect(sim.stats()).toMatchObject({ requests: { total: 0, byStatus: {} }, effects: { total: 0 } });
    expect(sim.faults().throttleRate).toBe(0.25);
    sim.setFaults({ throttleRate: 0 });
    const again = await submit(sim, { key, body });
    expect(again.status).toBe(201);
    expect(header(again, "idempotent-replayed")).toBeUndefined();
  });

  it("when a /__sim route is called with the wrong method or does not exist, then 405 or 404", async () => {
    const sim = await start();
    const wrong = await send(`${sim.url}/__sim/reset`, "GET");
    expect(wrong.status).toBe(405);
    expect(header(wrong, "allow")).toBe("POST");
    expect((await send(`${sim.url}/__sim/nothing`, "GET")).status).toBe(404);
    expect(json(await send(`${sim.url}/__sim/health`, "GET"))).toMatchObject({ status: "ok" });
  });

  it("when a client holds a keep-alive connection, then close() closes it rather than waiting for the client", async () => {
    const sim = await start();
    // An agent that never closes an idle socket itself: a close() that waited for it would never return.
    const agent = new Agent({ keepAlive: true });
    try {
      const socket = await new Promise<Socket>((resolve, reject) => {
        const request = get(`${sim.url}/__sim/health`, { agent }, (res) => {
          res.resume();
          res.on("end", () => {
            resolve(request.socket as Socket);
          });
        });
        request.on("error", reject);
      });
      const closed = once(socket, "close");
      await sim.close();
      await closed;
      expect(socket.destroyed).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  it.each([
    [{ errorRate: -0.1 }, /errorRate/],
    [{ errorRate: 0.6, lostRate: 0.6 }, /must not exceed 1/],
    [{ apiKey: "amn_dev_abc" }, /agent network key/],
    [{ apiKey: "has space" }, /without spaces/],
    [{ port: 70000 }, /port/],
    [{ latencyMs: { min: 10, max: 5 } }, /latencyMs.min must not exceed/],
  ])(
    "when the options are %j, then startSimulator rejects with a message naming the problem",
    async (options, message) => {
      const failure = startSimulator(options);
      await expect(failure).rejects.toBeInstanceOf(SimulatorOptionsError);
      await expect(failure).rejects.toThrow(message);
    },
  );
});
