import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from "../../src/simulator/index.js";
import { header, invoice, json, problemOf, submit, successSchema } from "./support/client.js";

let sim: SimulatorHandle | undefined;

async function start(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  sim = await startSimulator(options);
  return sim;
}

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("POST /api/v1/invoices: idempotency", () => {
  it("when a finished key is repeated with the same body, then the stored answer is replayed and no new effect is made", async () => {
    const s = await start();
    const key = randomUUID();
    const body = JSON.stringify(invoice("INV-replay"));

    const first = await submit(s, { key, body });
    const second = await submit(s, { key, body });

    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(header(second, "x-request-id")).toBe(header(first, "x-request-id"));
    expect(header(second, "idempotent-replayed")).toBe("true");
    expect(header(second, "idempotency-key")).toBe(key);
    const stats = s.stats();
    expect(stats.effects).toMatchObject({ total: 1, distinctKeys: 1, keysWithMultipleEffects: 0 });
    expect(stats.replays).toBe(1);
  });

  it("when the same key comes in upper case, then it is the same key and is replayed", async () => {
    const s = await start();
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    await submit(s, { key, body });
    const again = await submit(s, { key: key.toUpperCase(), body });
    expect(header(again, "idempotent-replayed")).toBe("true");
    expect(header(again, "idempotency-key")).toBe(key.toUpperCase());
  });

  it("when a finished key is reused with a different body, then 422 and no new effect", async () => {
    const s = await start();
    const key = randomUUID();
    await submit(s, { key, body: JSON.stringify(invoice("INV-a")) });

    const reused = await submit(s, { key, body: JSON.stringify(invoice("INV-b")) });

    expect(reused.status).toBe(422);
    expect(problemOf(reused).type).toMatch(/idempotency-key-reused$/);
    expect(s.stats()).toMatchObject({ effects: { total: 1 }, keyReuseRejections: 1 });
  });

  it("when the body differs only in white space, then it is a different body (bytes are compared)", async () => {
    const s = await start();
    const key = randomUUID();
    const doc = invoice();
    await submit(s, { key, body: JSON.stringify(doc) });
    const spaced = await submit(s, { key, body: JSON.stringify(doc, null, 2) });
    expect(spaced.status).toBe(422);
  });

  it("when the same key arrives while the first request is in flight, then 409 with Retry-After, and the first still succeeds", async () => {
    const s = await start({ latencyMs: { min: 300, max: 300 } });
    const key = randomUUID();
    const body = JSON.stringify(invoice());
    const inFlight = once(s.events, "in-flight");
    const first = submit(s, { key, body });
    await inFlight;
    s.setFaults({ latencyMs: { min: 0, max: 0 } }); // the first keeps its delay; the second is answered at once

    const second = await submit(s, { key, body });

    expect(second.status).toBe(409);
    expect(header(second, "retry-after")).toBe("1");
    expect(problemOf(second).type).toMatch(/idempotency-key-in-flight$/);
    expect(s.stats().inFlight).toBe(1);
    expect((await first).status).toBe(201);
    expect(s.stats()).toMatchObject({ inFlight: 0, inFlightConflicts: 1, effects: { total: 1 } });
  });

  it("when a different body arrives under a key in flight, then 422 (a reused key is never worth retrying)", async () => {
    const s = await start({ latencyMs: { min: 200, max: 200 } });
    const key = randomUUID();
    const inFlight = once(s.events, "in-flight");
    const first = submit(s, { key, body: JSON.stringify(invoice()) });
    await inFlight;
    s.setFaults({ latencyMs: { min: 0, max: 0 } });
    const other = await submit(s, { key, body: JSON.stringify(invoice()) });
    expect(other.status).toBe(422);
    expect((await first).status).toBe(201);
  });

  it("when many distinct invoices are committed, then every correlation id is unique", async () => {
    const s = await start();
    const answers = await Promise.all(Array.from({ length: 200 }, () => submit(s)));
    const ids = answers.map((a) => successSchema.parse(json(a)).correlation_id);
    expect(new Set(ids).size).toBe(200);
    expect(new Set(answers.map((a) => header(a, "x-request-id"))).size).toBe(200);
    expect(s.stats().effects).toMatchObject({ total: 200, distinctKeys: 200, keysWithMultipleEffects: 0 });
  });

  it("when keys are forgotten (retention expired) and a client resends one, then the second effect is reported", async () => {
    const s = await start();
    const key = randomUUID();
    const body = JSON.stringify(invoice("INV-twice"));
    const first = await submit(s, { key, body });
    expect(s.forgetKeys()).toBe(1);

    const second = await submit(s, { key, body });

    expect(second.status).toBe(201);
    expect(header(second, "idempotent-replayed")).toBeUndefined();
    expect(header(second, "x-request-id")).not.toBe(header(first, "x-request-id"));
    expect(s.stats().effects).toMatchObject({
      total: 2,
      distinctKeys: 1,
      keysWithMultipleEffects: 1,
      multipleEffectKeys: [key],
      externalIdsWithMultipleEffects: 1,
      multipleEffectExternalIds: ["INV-twice"],
    });
  });

  it("when one invoice is sent under two keys, then it shows up as an external id with two effects", async () => {
    const s = await start();
    const body = JSON.stringify(invoice("INV-rekeyed"));
    await submit(s, { body });
    await submit(s, { body });
    expect(s.stats().effects).toMatchObject({
      total: 2,
      keysWithMultipleEffects: 0,
      externalIdsWithMultipleEffects: 1,
      multipleEffectExternalIds: ["INV-rekeyed"],
    });
  });
});
