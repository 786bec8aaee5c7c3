import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config/load.js";
import { RedisServer } from "../../src/dev/redis-server.js";
import { Passes } from "../../src/ledger/passes.js";
import { RemoteClaims } from "../../src/ledger/remote-claims.js";
import { createLogger } from "../../src/log/logger.js";
import { metricsRoutes } from "../../src/ops/metrics/metrics-routes.js";
import { createRelayMetrics } from "../../src/ops/metrics/relay-metrics.js";
import { startOpsServer } from "../../src/ops/ops-server.js";
import { parseMetrics, sampleValue } from "../support/prometheus-text.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const silent = createLogger({ level: "silent" });
let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis.dispose();
});

const cleanups = cleanupsAfterEach();

async function serveMetrics(): Promise<{ url: string; prefix: string }> {
  const prefix = `metrics-${randomUUID()}`;
  const config = loadConfig({ REDIS_URL: redis.url, QUEUE_PREFIX: prefix });
  const server = await startOpsServer(
    config,
    { host: "127.0.0.1", port: 0 },
    new AbortController().signal,
    silent,
    [metricsRoutes(createRelayMetrics())],
  );
  cleanups.push(() => server.close());
  return { url: server.url ?? "", prefix };
}

async function scrape(url: string) {
  const response = await fetch(`${url}/metrics`);
  return { status: response.status, metrics: parseMetrics(await response.text()) };
}

describe("GET /metrics", () => {
  it("when the Grafana dashboard in docs/ queries a series, then /metrics exposes it, and the fleet's counters are there from the first scrape", async () => {
    const { url } = await serveMetrics();
    const { metrics } = await scrape(url);
    const dashboard = z
      .object({ panels: z.array(z.object({ targets: z.array(z.object({ expr: z.string() })) })) })
      .parse(
        JSON.parse(await readFile(new URL("../../docs/grafana-dashboard.json", import.meta.url), "utf8")),
      );
    const queried = new Set(
      dashboard.panels.flatMap((panel) =>
        panel.targets.flatMap((t) =>
          [...t.expr.matchAll(/\b(?:invoice_relay|bullmq)_[a-z_]+/g)].map((m) => m[0]),
        ),
      ),
    );
    expect(queried.size).toBeGreaterThan(10);
    const exposed = (name: string) => metrics.has(name) || metrics.has(name.replace(/_bucket$/, ""));
    expect([...queried].filter((name) => !exposed(name))).toEqual([]);
    expect(sampleValue(metrics, "invoice_relay_fleet_http_attempts_total", { status_class: "2xx" })).toBe(0);
    expect(sampleValue(metrics, "invoice_relay_fleet_invoices_final_total", { status: "failed" })).toBe(0);
    expect(sampleValue(metrics, "invoice_relay_fleet_http_requests_total")).toBe(0);
    expect(
      metrics.get("invoice_relay_fleet_http_attempts_total")?.metrics.map((m) => m.labels?.["status_class"]),
    ).not.toContain("1xx");
  });

  it("when no pass has ended yet, then the last-pass gauges are absent; once one has, they show its end and exit code, whatever scans that took no file came after", async () => {
    const { url, prefix } = await serveMetrics();
    const before = await scrape(url);
    expect(before.status).toBe(200);
    expect(sampleValue(before.metrics, "invoice_relay_redis_up")).toBe(1);
    expect(before.metrics.get("invoice_relay_last_pass_exit_code")?.metrics).toEqual([]);
    expect(before.metrics.get("invoice_relay_last_pass_end_time_seconds")?.metrics).toEqual([]);
    expect(sampleValue(before.metrics, "bullmq_job_count", { state: "waiting" })).toBe(0);

    const client = new Redis(redis.url);
    cleanups.push(async () => {
      await client.quit();
    });
    const passes = new Passes(client, prefix);
    const pass = { kind: "run" as const, batches: [] as string[], invoices: {} };
    const DAY = 86_400_000;
    const now = 1_700_000_001_000;
    await passes.write(
      { ...pass, id: "a", startedAt: 1_700_000_000_000, endedAt: 1_700_000_000_500, exitCode: 2 },
      DAY,
      now,
    );
    // A pass still running is not the last pass ended.
    await passes.write({ ...pass, id: "b", kind: "run", startedAt: now - 1000 }, DAY, now);
    // A scheduled scan that took no file is listed, but says nothing of how the nights go.
    const empty = { id: "c", kind: "scan" as const, startedAt: now - 500, endedAt: now - 400, exitCode: 0 };
    await passes.write({ ...pass, ...empty }, DAY, now);
    const after = await scrape(url);
    expect(sampleValue(after.metrics, "invoice_relay_last_pass_exit_code")).toBe(2);
    expect(sampleValue(after.metrics, "invoice_relay_last_pass_end_time_seconds")).toBe(1_700_000_000.5);
  });

  it("when SFTP sources have been polled, then each has its last poll, files waiting, results to upload and whether it is failing", async () => {
    const { url, prefix } = await serveMetrics();
    const client = new Redis(redis.url);
    cleanups.push(async () => {
      await client.quit();
    });
    const acme = new RemoteClaims(client, prefix, "acme");
    await acme.setState({
      ...(await acme.state()),
      lastPollAt: 1_700_000_000_000,
      waiting: 2,
      reportsPending: 1,
    });
    const beta = new RemoteClaims(client, prefix, "beta");
    await beta.setState({
      ...(await beta.state()),
      lastError: "SFTP source beta: q7z-error-detail",
      failures: 3,
    });
    const { metrics } = await scrape(url);
    expect(sampleValue(metrics, "invoice_relay_sftp_last_poll_time_seconds", { source: "acme" })).toBe(
      1_700_000_000,
    );
    expect(sampleValue(metrics, "invoice_relay_sftp_files_waiting", { source: "acme" })).toBe(2);
    expect(sampleValue(metrics, "invoice_relay_sftp_reports_pending", { source: "acme" })).toBe(1);
    expect(sampleValue(metrics, "invoice_relay_sftp_failing", { source: "acme" })).toBe(0);
    expect(sampleValue(metrics, "invoice_relay_sftp_failing", { source: "beta" })).toBe(1);
    expect(JSON.stringify([...metrics.values()])).not.toContain("q7z-error-detail");
  });

  it("when Redis is down during a scrape, then the scrape still answers 200 with redis_up 0, Redis as the speed limit and this process's counters", async () => {
    const { url } = await serveMetrics();
    const up = (await scrape(url)).metrics;
    expect(sampleValue(up, "invoice_relay_redis_up")).toBe(1);
    expect(sampleValue(up, "invoice_relay_speed_limit", { limit: "idle" })).toBe(1);
    expect(sampleValue(up, "invoice_relay_speed_limit", { limit: "redis" })).toBe(0);
    await redis.stop();
    try {
      const down = await scrape(url);
      expect(down.status).toBe(200);
      expect(sampleValue(down.metrics, "invoice_relay_redis_up")).toBe(0);
      expect(sampleValue(down.metrics, "invoice_relay_speed_limit", { limit: "redis" })).toBe(1);
      expect(sampleValue(down.metrics, "invoice_relay_speed_limit", { limit: "idle" })).toBe(0);
      expect(down.metrics.get("invoice_relay_ledger_records")?.metrics).toEqual([]);
      expect(down.metrics.has("bullmq_job_count")).toBe(false);
      expect(sampleValue(down.metrics, "invoice_relay_http_attempts_total", { status_class: "2xx" })).toBe(0);
    } finally {
      await redis.dispose();
      redis = await RedisServer.start();
    }
  });
});
