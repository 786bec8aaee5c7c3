import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_RULESET_VERSION,
  DEMO_API_KEY,
  startSimulator,
  type SimulatorHandle,
} from "../../src/simulator/index.js";
import { header, invoice, json, problemOf, send, submit, successSchema } from "./support/client.js";

let sim: SimulatorHandle;

beforeAll(async () => {
  sim = await startSimulator({ maxBodyBytes: 4096 });
});
afterAll(() => sim.close());

describe("POST /api/v1/invoices: request rules", () => {
  it("when a valid invoice is submitted, then it is answered 201 with a ruleset outcome and a correlation id", async () => {
    const key = randomUUID();
    const answer = await submit(sim, {
      key,
      body: JSON.stringify({
        ...invoice("INV-1"),
        routing: { destination_country: "US", archive_policy: "us-east-7y" },
      }),
    });

    expect(answer.status).toBe(201);
    expect(header(answer, "content-type")).toBe("application/json");
    const body = successSchema.parse(json(answer));
    expect(body).toMatchObject({
      idempotency_key: key,
      external_id: "INV-1",
      ruleset_version: DEFAULT_RULESET_VERSION,
      outcome: {
        decision: "route",
        route: "edi:US",
        channel: "edi",
        archive: { region: "us-east", retention: "7y" },
      },
    });
    expect(header(answer, "x-request-id")).toBe(body.correlation_id);
    expect(header(answer, "idempotency-key")).toBe(key);
    expect(header(answer, "idempotent-replayed")).toBeUndefined();
  });

  it("when Authorization is missing, then 401 problem+json with WWW-Authenticate: Bearer", async () => {
    const answer = await send(
      `${sim.url}/api/v1/invoices`,
      "POST",
      { "idempotency-key": randomUUID(), "content-type": "application/json" },
      JSON.stringify(invoice()),
    );
    expect(answer.status).toBe(401);
    expect(header(answer, "www-authenticate")).toBe("Bearer");
    expect(problemOf(answer).type).toMatch(/unauthorized$/);
  });

  it.each([
    ["a wrong key", `Bearer ${DEMO_API_KEY}x`],
    ["another scheme", `Basic ${DEMO_API_KEY}`],
    ["the key without a scheme", DEMO_API_KEY],
    ["an empty bearer", "Bearer "],
  ])("when Authorization carries %s, then 401", async (_what, authorization) => {
    const answer = await submit(sim, { headers: { authorization } });
    expect(answer.status).toBe(401);
    expect(problemOf(answer).status).toBe(401);
  });

  it("when the scheme is written in lower case, then the key is still accepted (schemes are case-insensitive)", async () => {
    const answer = await submit(sim, { headers: { authorization: `bearer ${DEMO_API_KEY}` } });
    expect(answer.status).toBe(201);
  });

  it("when both the key and the idempotency key are bad, then 401 comes first", async () => {
    const answer = await submit(sim, {
      apiKey: "wrong",
      key: "not-a-uuid",
      headers: { "content-type": "text/plain" },
    });
    expect(answer.status).toBe(401);
  });

  it("when Idempotency-Key is missing, then 400", async () => {
    const answer = await send(
      `${sim.url}/api/v1/invoices`,
      "POST",
      { authorization: `Bearer ${DEMO_API_KEY}`, "content-type": "application/json" },
      JSON.stringify(invoice()),
    );
    expect(answer.status).toBe(400);
    expect(problemOf(answer).type).toMatch(/idempotency-key-missing$/);
  });

  it.each(["not-a-uuid", "", "0b9e3a58-3c61-5f0e-8f1e-2d0a5b7c9e1", `${randomUUID()}, ${randomUUID()}`])(
    "when Idempotency-Key is %j, then 400",
    async (key) => {
      const answer = await submit(sim, { key });
      expect(answer.status).toBe(400);
      expect(problemOf(answer).detail).toMatch(/Idempotency-Key/);
    },
  );

  it("when the key is a structured-field string (quoted, as in the IETF draft), then it is accepted and echoed as sent", async () => {
    const quoted = `"${randomUUID()}"`;
    const answer = await submit(sim, { key: quoted });
    expect(answer.status).toBe(201);
    expect(header(answer, "idempotency-key")).toBe(quoted);
  });

  it.each([
    ["no Content-Type", undefined],
    ["text/plain", "text/plain"],
    ["application/jsonx", "application/jsonx"],
    ["a non-UTF-8 charset", "application/json; charset=latin1"],
  ])("when the body is sent with %s, then 415", async (_what, contentType) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${DEMO_API_KEY}`,
      "idempotency-key": randomUUID(),
    };
    if (contentType !== undefined) headers["content-type"] = contentType;
    const answer = await send(`${sim.url}/api/v1/invoices`, "POST", headers, JSON.stringify(invoice()));
    expect(answer.status).toBe(415);
    expect(problemOf(answer).type).toMatch(/unsupported-media-type$/);
  });

  it.each(["application/json; charset=utf-8", "Application/JSON;charset=UTF-8"])(
    "when Content-Type is %j, then it is accepted",
    async (contentType) => {
      const answer = await submit(sim, { headers: { "content-type": contentType } });
      expect(answer.status).toBe(201);
    },
  );

  it("when the body is not JSON, then 422 problem+json", async () => {
    const answer = await submit(sim, { body: "{not json" });
    expect(answer.status).toBe(422);
    expect(problemOf(answer).type).toMatch(/malformed-json$/);
  });

  it("when the body is not UTF-8, then 422 rather than silently replaced characters", async () => {
    const body = Buffer.concat([Buffer.from('{"external_id":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const raw = await send(
      `${sim.url}/api/v1/invoices`,
      "POST",
      {
        authorization: `Bearer ${DEMO_API_KEY}`,
        "idempotency-key": randomUUID(),
        "content-type": "application/json",
      },
      body,
    );
    expect(raw.status).toBe(422);
    expect(problemOf(raw).type).toMatch(/malformed-json$/);
  });

  it("when the body has an extra field, then 422 names the field", async () => {
    const answer = await submit(sim, { body: JSON.stringify({ ...invoice(), amount: 12 }) });
    expect(answer.status).toBe(422);
    const problem = problemOf(answer);
    expect(problem.errors).toEqual([{ field: "amount", message: "is not an allowed field" }]);
    expect(problem.detail).toContain("amount");
  });

  it("when a nested field is extra, missing or invalid, then 422 names each one by its dotted path", async () => {
    const body = {
      ...invoice(),
      external_id: undefined, // JSON.stringify leaves it out
      currency: "EURO",
      routing: { destination_country: "DE", archive_policy: "eu-10y", lane: 1 },
    };
    const answer = await submit(sim, { body: JSON.stringify(body) });
    expect(answer.status).toBe(422);
    const fields = problemOf(answer).errors?.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(["currency", "external_id", "routing.lane"]));
    expect(problemOf(answer).errors).toContainEqual({ field: "external_id", message: "is required" });
  });

  it("when the body is a JSON array, then 422 says the body must be an object", async () => {
    const answer = await submit(sim, { body: JSON.stringify([invoice()]) });
    expect(answer.status).toBe(422);
    expect(problemOf(answer).errors).toEqual([{ field: "(body)", message: "must be an object" }]);
  });

  it("when the body is larger than the limit, then 413", async () => {
    const answer = await submit(sim, { body: JSON.stringify({ ...invoice(), pad: "x".repeat(5000) }) });
    expect(answer.status).toBe(413);
    expect(problemOf(answer).detail).toContain("4096");
  });

  it("when another method or path is used, then 405 with Allow, or 404", async () => {
    const wrongMethod = await send(`${sim.url}/api/v1/invoices`, "GET");
    expect(wrongMethod.status).toBe(405);
    expect(header(wrongMethod, "allow")).toBe("POST");
    const wrongPath = await send(`${sim.url}/api/v2/invoices`, "POST");
    expect(wrongPath.status).toBe(404);
    expect(problemOf(wrongPath).status).toBe(404);
  });

  it("when requests are rejected by the rules, then no effect is counted for them", async () => {
    const before = sim.stats().effects.total;
    await submit(sim, { apiKey: "nope" });
    await submit(sim, { body: "[]" });
    expect(sim.stats().effects.total).toBe(before);
  });
});
