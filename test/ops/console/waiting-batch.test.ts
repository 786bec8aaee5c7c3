import { afterEach, describe, expect, it } from "vitest";
import { newBatchId } from "../../../src/ledger/batch-id.js";
import type { BatchStore } from "../../../src/ledger/batch-store.js";
import { recordApiKeyRefused } from "../../../src/queue/api-key-refusal.js";
import { createInvoiceQueue } from "../../../src/queue/invoice-queue.js";
import { consoleApp, type ConsoleApp } from "./console-app.js";

const apps: ConsoleApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** A batch of three rows read, one rejected when read, two sent and waiting for the service. */
async function ingestedBatch(c: ConsoleApp): Promise<string> {
  const batches: BatchStore = c.batches;
  const id = newBatchId(new Date("2026-11-20T01:00:00Z"));
  await batches.open({ id, file: "held.csv", format: "csv", path: `/nowhere/${id}`, host: "test" });
  await batches.update(id, {
    state: "ingested",
    rows: 3,
    valid_rows: 2,
    read_counts: JSON.stringify({ rejected: 1 }),
  });
  // The keys it still waits for, as the ledger counts them when it registers the batch's rows.
  await c.redis.hset(batches.names.pending, id, "2");
  return id;
}

const text = (body: string) => body.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("a batch waiting on the service", () => {
  it("when the service refused the API key, then the batches page and the batch's page say why it waits, and every row is counted", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    const id = await ingestedBatch(c);
    const queue = createInvoiceQueue(c.redis, c.prefix, 5);
    try {
      await recordApiKeyRefused(c.redis, queue, c.prefix, {
        httpStatus: 401,
        detail: "unknown API key",
        at: Date.now(),
      });
    } finally {
      await queue.close();
    }
    const list = text((await c.app.inject({ url: "/" })).body);
    expect(list).toContain("1 rejected");
    expect(list).toContain("2 waiting");
    expect(list).toMatch(/waiting: the invoice service refused the API key \(HTTP 401\)/);
    const one = text((await c.app.inject({ url: `/batches/${id}` })).body);
    expect(one).toMatch(/Waiting the invoice service refused the API key \(HTTP 401\)/);
  });

  it("when nothing holds submission, then a waiting batch shows its rows and no reason", async () => {
    const c = await consoleApp(undefined);
    apps.push(c);
    await ingestedBatch(c);
    const list = text((await c.app.inject({ url: "/" })).body);
    expect(list).toContain("1 rejected");
    expect(list).toContain("2 waiting");
    expect(list).not.toContain("waiting:");
  });
});
