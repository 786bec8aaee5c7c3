import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  DEVELOPER_KEY_NOTE,
  DEVELOPER_KEY_PREFIX,
  KEY_PREFIX_LENGTH,
  startSimulator,
  type SimulatorHandle,
} from "../../src/simulator/index.js";
import { header, invoice, json, problemOf, send, submit } from "./support/client.js";

const tokenSchema = z.strictObject({
  developer_id: z.string().min(1),
  api_key: z.string(),
  key_prefix: z.string(),
  note: z.string(),
});

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

function requestToken(body: string, contentType = "application/json") {
  return send(`${sim.url}/api/v1/auth/token`, "POST", { "content-type": contentType }, body);
}

describe("POST /api/v1/auth/token (developer-key bootstrap)", () => {
  it("when a developer asks for a key, then 201 returns it once, with its prefix and a store-it-securely note", async () => {
    const answer = await requestToken(
      JSON.stringify({ developer_name: "acme-agents", email: "dev@acme.example" }),
    );

    expect(answer.status).toBe(201);
    expect(header(answer, "cache-control")).toBe("no-store");
    const token = tokenSchema.parse(json(answer));
    expect(token.api_key).toMatch(new RegExp(`^${DEVELOPER_KEY_PREFIX}[A-Za-z0-9_-]{32}$`));
    expect(token.key_prefix).toBe(token.api_key.slice(0, KEY_PREFIX_LENGTH));
    expect(token.key_prefix.startsWith("amn_dev_")).toBe(true);
    expect(token.note).toBe(DEVELOPER_KEY_NOTE);
    expect(token.note).toMatch(/only once/);
  });

  it("when keys are issued, then only their sha256 is kept and no endpoint shows a key again", async () => {
    const token = tokenSchema.parse(
      json(await requestToken(JSON.stringify({ developer_name: "hash-check", email: "h@example.org" }))),
    );
    const listing = await send(`${sim.url}/__sim/developer-keys`, "GET");
    const stats = await send(`${sim.url}/__sim/stats`, "GET");

    expect(listing.text).toContain(createHash("sha256").update(token.api_key).digest("hex"));
    expect(listing.text).toContain(token.key_prefix);
    for (const text of [listing.text, stats.text]) expect(text).not.toContain(token.api_key);
  });

  it("when the same developer asks twice, then two different keys are issued", async () => {
    const body = JSON.stringify({ developer_name: "twice", email: "t@example.org" });
    const a = tokenSchema.parse(json(await requestToken(body)));
    const b = tokenSchema.parse(json(await requestToken(body)));
    expect(a.api_key).not.toBe(b.api_key);
    expect(a.developer_id).not.toBe(b.developer_id);
  });

  it("when a developer key is used on the invoice API, then it is refused (the services share no credentials)", async () => {
    const token = tokenSchema.parse(
      json(await requestToken(JSON.stringify({ developer_name: "crossover", email: "c@example.org" }))),
    );
    const answer = await submit(sim, {
      apiKey: token.api_key,
      key: randomUUID(),
      body: JSON.stringify(invoice()),
    });
    expect(answer.status).toBe(401);
  });

  it("when the body is not JSON, then 400 problem+json", async () => {
    const answer = await requestToken("{oops");
    expect(answer.status).toBe(400);
    expect(problemOf(answer).type).toMatch(/malformed-json$/);
  });

  it.each([
    [{ developer_name: "", email: "a@example.org" }, "developer_name"],
    [{ developer_name: "   ", email: "a@example.org" }, "developer_name"],
    [{ developer_name: "x", email: "not-an-email" }, "email"],
    [{ email: "a@example.org" }, "developer_name"],
    [{ developer_name: "x", email: "a@example.org", role: "admin" }, "role"],
  ])("when the body is %j, then 422 names %s", async (body, field) => {
    const answer = await requestToken(JSON.stringify(body));
    expect(answer.status).toBe(422);
    expect(problemOf(answer).errors?.map((e) => e.field)).toContain(field);
  });

  it("when the body is not sent as JSON, then 415", async () => {
    const answer = await requestToken(
      JSON.stringify({ developer_name: "x", email: "a@example.org" }),
      "text/plain",
    );
    expect(answer.status).toBe(415);
  });
});
