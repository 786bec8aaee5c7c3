import { afterEach, describe, expect, it } from "vitest";
import { testRedis } from "../../support/redis.js";
import { consoleApp, reportedBatch, TOKEN, type ConsoleApp } from "./console-app.js";

const apps: ConsoleApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** Ids that are not of the shape the relay gives batches, some naming another ledger name. */
const notIds = (id: string) => [
  `${id}:keys`,
  `${id}:decisions`,
  `${id}%3Akeys`,
  "..%2F..%2Fetc%2Fpasswd",
  "B1",
  `${id}x`,
  // the time's T and Z in lower case (the suffix may be all digits: changing its case may change nothing)
  id.replace("T", "t").replace("Z", "z"),
  "x".repeat(90),
];

describe("batch ids at the console's edge", () => {
  it("when a batch address names another ledger name (<id>:keys), then the console answers 404 naming the shape, not 500", async () => {
    const c = await open(TOKEN);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 1 });
    // The batch's key list is a string: read as a batch record it answers WRONGTYPE.
    const redis = testRedis();
    try {
      await redis.set(c.batches.names.batchKeyList(id), "0123456789abcdef");
    } finally {
      redis.disconnect();
    }
    for (const route of ["report.csv", "summary.json"]) {
      const answer = await c.app.inject({ url: `/batches/${id}:keys/${route}` });
      expect(answer.statusCode, route).toBe(404);
      expect(answer.body, route).toContain(
        "That is not a batch id: a batch id looks like YYYYMMDDTHHMMSSZ-xxxxxx",
      );
    }
  });

  it("when any batch route is asked with an id not of the batch id shape, then it answers 404 and calls no port", async () => {
    const c = await open(TOKEN);
    const id = await reportedBatch(c.batches, "a.csv", { failed: 1 });
    for (const bad of notIds(id)) {
      for (const url of [`/batches/${bad}`, `/batches/${bad}/report.csv`, `/batches/${bad}/summary.json`]) {
        const answer = await c.app.inject({ url });
        expect(answer.statusCode, url).toBe(404);
        expect(answer.body, url).toContain("is not a batch id");
      }
      const post = await c.app.inject({
        method: "POST",
        url: `/batches/${bad}/retry`,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(post.statusCode, bad).toBe(404);
    }
    expect(c.retried).toEqual([]);
    expect(c.queries).toEqual([]);
    // The real id still works.
    expect((await c.app.inject({ url: `/batches/${id}` })).statusCode).toBe(200);
  });
});

async function open(token: string | undefined): Promise<ConsoleApp> {
  const app = await consoleApp(token);
  apps.push(app);
  return app;
}
