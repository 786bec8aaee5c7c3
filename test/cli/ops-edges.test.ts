import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createRedis } from "../../src/queue/connection.js";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { recordApiKeyRefused } from "../../src/queue/api-key-refusal.js";
import { BatchStore } from "../../src/ledger/batch-store.js";
import { exportCsvLine, exportRow } from "../../src/results/export-records.js";
import { escapeGlob } from "../../src/ledger/redis-ledger.js";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import { testInvoices } from "../support/invoices.js";
import { childEnv, distPath } from "../support/processes.js";
import { testPrefix, testRedisUrl } from "../support/redis.js";
import { cli, statusJson } from "./ops-support.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

/** Environment of a deployment with its own prefix; these commands need no service. */
function envOf(prefix: string): Record<string, string> {
  return cliEnv({ queuePrefix: prefix });
}

function redisFor(): ReturnType<typeof createRedis> {
  const redis = createRedis(testRedisUrl(), "producer");
  cleanups.push(() => {
    redis.disconnect();
    return Promise.resolve();
  });
  return redis;
}

describe("status, retry and results at the edges", () => {
  it("when the service refused the API key, then status shows the refusal, the paused queue and what to do", async () => {
    const prefix = testPrefix();
    const redis = redisFor();
    const queue = createInvoiceQueue(redis, prefix, 3);
    cleanups.push(() => queue.close());
    await recordApiKeyRefused(redis, queue, prefix, {
      httpStatus: 401,
      detail: "invalid API key",
      at: Date.now(),
      setting: "the key in INVOICE_API_KEY_FILE (/run/secrets/invoice-api-key)",
    });

    const status = await statusJson(envOf(prefix));
    expect(status.key_refused).toMatchObject({ http_status: 401, detail: "invalid API key" });
    // The setting the refused process read its key from, as its own log says.
    expect(status.key_refused?.action).toContain(
      "fix the key in INVOICE_API_KEY_FILE (/run/secrets/invoice-api-key)",
    );
    expect(status.queue.is_paused).toBe(true);
    const text = await cli(["status"], envOf(prefix));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("(PAUSED)");
    expect(text.stdout).toContain("API KEY REFUSED by the invoice service");
    expect(text.stdout).toContain("no batches yet");
    expect(text.stdout).not.toContain("irs_live"); // never a credential in the output
  });

  it("when there are more batches than status shows, then the most recent 20 are listed and the total is given", async () => {
    const prefix = testPrefix();
    let clock = Date.parse("2026-11-01T02:00:00Z");
    const batches = new BatchStore(redisFor(), prefix, () => (clock += 60_000));
    for (let i = 1; i <= 22; i++) {
      const id = `20261101T0200${String(i).padStart(2, "0")}Z-00000${i % 10}`;
      await batches.open({ id, file: `f${i}.csv`, format: "csv", path: `/nowhere/f${i}.csv`, host: "h" });
    }
    const status = await statusJson(envOf(prefix));
    expect(status.batches_total).toBe(22);
    expect(status.batches.map((b) => b.file)).toEqual(Array.from({ length: 20 }, (_, i) => `f${22 - i}.csv`));
    expect(status.batches[0]).toMatchObject({ state: "ingesting", counts: null, report_csv: null });
    expect((await cli(["status"], envOf(prefix))).stdout).toContain("batches: 20 of 22, most recent first");
  });

  it("when the reader of results goes away early (`| head`), then the export stops quietly with exit 0", async () => {
    const prefix = testPrefix();
    const store = new RedisLedger(redisFor(), prefix);
    const rows = testInvoices(5000, `pipe-${randomUUID()}`).map((inv, i) => ({
      line: i + 2,
      key: inv.key,
      externalId: inv.invoice.external_id,
    }));
    await store.registerRows("b1", rows);

    const child = spawn(process.execPath, [distPath("workers/cli.js"), "results"], {
      env: childEnv(envOf(prefix)),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let received = 0;
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.once("data", (d: Buffer) => {
      received = d.length;
      child.stdout.destroy(); // what `head` does once it has its lines
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(received).toBeGreaterThan(0);
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("when a record is exported, then times are ISO, a success has no error, and the body appears only when asked", () => {
    const record = {
      key: "k-1",
      status: "succeeded" as const,
      external_id: 'ACME, "0001"',
      batch: "b1",
      batches: ["b1"],
      line: 2,
      attempts: 2,
      http_status: 201,
      correlation_id: "c-1",
      ruleset_version: "2026-10-16.1",
      error: "",
      response_body: '{"secret-ish":"payload"}',
      first_attempt_at: Date.parse("2026-11-01T02:00:00Z"),
      last_attempt_at: Date.parse("2026-11-01T02:00:05Z"),
    };
    const row = exportRow(record, false);
    expect(row).toMatchObject({ error: null, first_attempt_at: "2026-11-01T02:00:00.000Z", attempts: 2 });
    expect("response_body" in row).toBe(false);
    expect(exportCsvLine(row, false)).toBe(
      'k-1,"ACME, ""0001""",succeeded,201,c-1,2026-10-16.1,2,b1,2,2026-11-01T02:00:00.000Z,2026-11-01T02:00:05.000Z,,\r\n',
    );
    expect(exportRow(record, true).response_body).toBe('{"secret-ish":"payload"}');
  });

  it("when a queue prefix holds glob characters, then the scan pattern matches it literally", () => {
    expect(escapeGlob("team[a]*:relay:r:")).toBe("team\\[a\\]\\*:relay:r:");
    expect(escapeGlob("plain-prefix:relay:r:")).toBe("plain-prefix:relay:r:");
  });
});
