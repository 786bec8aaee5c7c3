import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { invoiceJson } from "../../src/invoice/key.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { RequestHeldBackError } from "../../src/submit/errors/request-held-back-error.js";
import { HttpSubmitter } from "../../src/submit/http-submitter.js";
import { testInvoice } from "../support/invoices.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_test_key_0123456789";
const cleanups = cleanupsAfterEach();

async function setup(latencyMs: number, requestTimeoutMs: number) {
  const sim: SimulatorHandle = await startSimulator({
    apiKey: API_KEY,
    seed: 3,
    latencyMs: { min: latencyMs, max: latencyMs },
  });
  const submitter = new HttpSubmitter({
    baseUrl: sim.url,
    apiKey: API_KEY,
    connections: 2,
    requestTimeoutMs,
    responseBodyMaxBytes: 4096,
  });
  cleanups.push(
    () => sim.close(),
    () => submitter.close(),
  );
  return { sim, submitter };
}

describe("HTTP submitter", () => {
  it("when the service answers within the timeout, then the answer carries its status and body", async () => {
    const { submitter } = await setup(0, 2000);
    const answer = await submitter.submit(randomUUID(), invoiceJson(testInvoice(1, "http").invoice));
    expect(answer).toMatchObject({ kind: "response", status: 201 });
    expect(answer.kind === "response" ? answer.body : "").toContain("correlation_id");
  });

  it("when the service takes longer than the request timeout, then the attempt is a timeout, not an answer", async () => {
    const { submitter } = await setup(1500, 200);
    const started = Date.now();
    const answer = await submitter.submit(randomUUID(), invoiceJson(testInvoice(2, "http").invoice));
    expect(answer).toMatchObject({ kind: "no-response", reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(1200);
  });

  it("when requests finish early, then their deadlines fire no aborts later and the pool keeps working", async () => {
    const { submitter } = await setup(0, 300);
    const send = (i: number) => submitter.submit(randomUUID(), invoiceJson(testInvoice(i, "x").invoice));
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
    await new Promise((r) => setTimeout(r, 400));
    const later = await send(100);
    expect([...first, later].filter((a) => !(a.kind === "response" && a.status === 201))).toEqual([]);
  });

  it("when requests go, then each is counted before the service receives it, and one that cannot be counted is not sent", async () => {
    const { sim } = await setup(0, 2000);
    const seenWhenCounted: number[] = [];
    let countFails = false;
    const submitter = new HttpSubmitter({
      ...{
        baseUrl: sim.url,
        apiKey: API_KEY,
        connections: 4,
        requestTimeoutMs: 2000,
        responseBodyMaxBytes: 4096,
      },
      counting: () => {
        if (countFails) return Promise.reject(new Error("Connection is closed."));
        seenWhenCounted.push(sim.stats().requests.total);
        return Promise.resolve();
      },
    });
    cleanups.push(() => submitter.close());
    const send = (i: number) => submitter.submit(randomUUID(), invoiceJson(testInvoice(i, "s").invoice));
    for (let i = 0; i < 3; i++) expect(await send(i)).toMatchObject({ kind: "response", status: 201 });
    expect(seenWhenCounted).toEqual([0, 1, 2]);
    countFails = true;
    await expect(send(3)).rejects.toBeInstanceOf(RequestHeldBackError);
    expect(sim.stats().requests.total).toBe(3);
  });

  it("when the headers come in time but the body stalls, then the attempt is still a timeout at the deadline", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(201, { "content-type": "application/json" });
      res.write('{"correlation_id":"c-1",'); // and the rest never comes
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    });
    const { port } = server.address() as AddressInfo;
    const submitter = new HttpSubmitter({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      connections: 1,
      requestTimeoutMs: 300,
      responseBodyMaxBytes: 4096,
    });
    cleanups.push(() => submitter.close());
    const started = Date.now();
    const answer = await submitter.submit(randomUUID(), invoiceJson(testInvoice(3, "http").invoice));
    expect(answer).toMatchObject({ kind: "no-response", reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("when the service refuses the key and the key was rotated since, then the request is sent again at once with the new key", async () => {
    const { sim } = await setup(0, 2000);
    let key = API_KEY;
    let reads = 0;
    const submitter = new HttpSubmitter({
      baseUrl: sim.url,
      apiKey: {
        current: () => key,
        refresh: () => {
          reads++;
          return Promise.resolve(key);
        },
      },
      connections: 2,
      requestTimeoutMs: 2000,
      responseBodyMaxBytes: 4096,
    });
    cleanups.push(() => submitter.close());
    const rotated = "irs_live_rotated_0123456789";
    sim.setApiKey(rotated);
    const sent = submitter.submit(randomUUID(), invoiceJson(testInvoice(4, "http").invoice));
    key = rotated; // written to the file while the request was on its way
    expect(await sent).toMatchObject({ kind: "response", status: 201 });
    expect(reads).toBe(1);
    const refusedKeys = sim.stats().requests.byStatus["401"];
    expect(refusedKeys).toBe(1);

    sim.setApiKey("irs_live_nobody_has_this_key");
    const refused = await submitter.submit(randomUUID(), invoiceJson(testInvoice(5, "http").invoice));
    expect(refused).toMatchObject({ kind: "response", status: 401 });
    expect(reads).toBe(2);
  });
});
