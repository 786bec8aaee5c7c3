import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, requireSubmitConfig } from "../../src/config/load.js";
import { invoiceJson } from "../../src/invoice/key.js";
import { startTestWorker, enqueueBatch } from "../support/engine.js";
import { testInvoice } from "../support/invoices.js";
import { testPrefix, testRedisUrl } from "../support/redis.js";
import { leakedSecrets, secretUrlArb } from "../support/url-secrets.js";
import { exportedTexts, inMemoryTracing } from "./support.js";

/**
 * A hostile service: it answers the first attempt of each key 503 and the next 201, and echoes the
 * bearer key it was sent as its correlation ID (header and body) and in its error detail, trying to
 * push the key into the spans.
 */
let service: Server;
let port = 0;
beforeAll(async () => {
  const seen = new Set<string>();
  service = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      const key = String(req.headers["idempotency-key"]);
      const first = !seen.has(key);
      seen.add(key);
      const body = JSON.stringify({
        correlation_id: token,
        detail: `refused ${token}`,
        ruleset_version: token,
      });
      res
        .writeHead(first ? 503 : 201, { "content-type": "application/json", "x-request-id": token })
        .end(body);
    });
  });
  await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve));
  port = (service.address() as AddressInfo).port;
});
afterAll(
  () =>
    new Promise<void>((resolve) =>
      service.close(() => {
        resolve();
      }),
    ),
);

const alnum = (min: number, max: number) =>
  fc.string({
    unit: fc.constantFrom(...Array.from("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")),
    minLength: min,
    maxLength: max,
  });

describe("what spans say", () => {
  it("when every secret setting holds a secret and the service echoes the API key, then no span, link or resource attribute holds any of them, nor the invoice", async () => {
    await fc.assert(
      fc.asyncProperty(
        alnum(16, 24),
        alnum(16, 24),
        alnum(12, 20),
        alnum(12, 20),
        secretUrlArb("postgres", "relay", "127.0.0.1:5432", "/relay"),
        async (apiCore, consoleToken, webhookToken, urlPassword, database) => {
          const apiKey = `irs_live_Zq${apiCore}`;
          const secrets = [apiKey, apiCore, consoleToken, webhookToken, urlPassword, ...database.secrets];
          const config = requireSubmitConfig(
            loadConfig({
              REDIS_URL: testRedisUrl(),
              QUEUE_PREFIX: testPrefix(),
              INVOICE_API_URL: `http://relay:Zq${urlPassword}@127.0.0.1:${port}/`,
              INVOICE_API_KEY: apiKey,
              CONSOLE_TOKEN: `Zq${consoleToken}`,
              NOTIFY_WEBHOOK_URL: `https://hooks.example.com/services/Zq${webhookToken}`,
              RESULTS_DATABASE_URL: database.url,
              BACKOFF_BASE_MS: "10",
              BACKOFF_CAP_MS: "50",
              LOG_LEVEL: "silent",
            }),
          );
          const cleanups: (() => Promise<void>)[] = [];
          try {
            const traced = inMemoryTracing(cleanups);
            const inv = testInvoice(1, `secret-${randomUUID()}`);
            await enqueueBatch(config, "b1", [inv], traced.handle.tracing);
            const w = await startTestWorker(config, { tracing: traced.handle.tracing });
            cleanups.push(() => w.service.close(1000));
            await w.untilFinal(1);
            const texts = (await traced.spans()).flatMap(exportedTexts).join("\n");
            expect(texts).toContain("invoice_relay.correlation_id");
            expect(leakedSecrets(texts, secrets)).toEqual([]);
            expect(texts).not.toContain(invoiceJson(inv.invoice));
            expect(texts).not.toContain(inv.invoice.external_id);
          } finally {
            for (const cleanup of cleanups.reverse()) await cleanup();
          }
        },
      ),
      { numRuns: 6 },
    );
  });
});
