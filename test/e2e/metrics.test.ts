import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { RedisLedger } from "../../src/ledger/redis-ledger.js";
import type { Attempt } from "../../src/simulator/index.js";
import { readReports, summarySchema, copySamples, tempDropDir } from "../support/drop.js";
import { spawnNode, until, type Spawned } from "../support/processes.js";
import { parseMetrics, sampleValue } from "../support/prometheus-text.js";
import { testRedisUrl } from "../support/redis.js";
import { faultyService } from "../support/faulty-service.js";
import { runCli } from "../support/cli-run.js";
import { cliEnv } from "../support/cli-env.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const API_KEY = "irs_live_metrics_key_0123456789";
const cleanups = cleanupsAfterEach();

/** The URL a serving command printed ("serving http://…/ until Ctrl-C"), once it has. */
async function servingUrl(proc: Spawned): Promise<string> {
  let url: string | undefined;
  await until(
    async () => {
      url = /serving (http:\/\/127\.0\.0\.1:\d+)\/ until Ctrl-C/.exec(proc.output())?.[1];
      return Promise.resolve(url !== undefined || proc.child.exitCode !== null);
    },
    120_000,
    "the serving line",
  );
  if (url === undefined) throw new Error(`the command ended without serving:\n${proc.output()}`);
  return url;
}

function statusClass(attempt: Attempt): string {
  return attempt.lost ? "network" : `${Math.floor(attempt.status / 100)}xx`;
}

describe("/metrics of a nightly pass", () => {
  it("when run --serve passes the samples against a faulty service, then /metrics counts what the ledger, the reports and the service saw", async () => {
    const { sim, seen: attempts } = await faultyService(API_KEY, { seed: 2026, lostRate: 0.15 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    await copySamples(drop.dir);
    const prefix = `metrics-${randomUUID()}`;

    const proc = spawnNode(
      "workers/cli.js",
      ["run", "--serve"],
      cliEnv(
        { apiUrl: sim.url, apiKey: API_KEY, queuePrefix: prefix, dropDir: drop.dir },
        {
          BACKOFF_BASE_MS: "50",
          BACKOFF_CAP_MS: "500",
          HTTP_ADDR: "127.0.0.1:0",
        },
      ),
    );
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    const url = await servingUrl(proc);
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const metrics = parseMetrics(text);

    const redis = new Redis(testRedisUrl());
    cleanups.push(async () => {
      redis.disconnect();
      return Promise.resolve();
    });
    const counts = await new RedisLedger(redis, prefix).counts();
    const final = (status: string) => sampleValue(metrics, "invoice_relay_invoices_final_total", { status });
    expect({ succeeded: final("succeeded"), failed: final("failed") }).toEqual({
      succeeded: counts.succeeded,
      failed: counts.failed,
    });
    expect(counts.succeeded).toBeGreaterThan(0);
    for (const [status, n] of Object.entries(counts))
      expect([status, sampleValue(metrics, "invoice_relay_ledger_invoices", { status })]).toEqual([
        status,
        n,
      ]);

    const reports = [...(await readReports(drop.dir)).values()];
    const summaries = reports.map((r) => summarySchema.parse(r.summary));
    const sum = (pick: (s: (typeof summaries)[number]) => number) =>
      summaries.reduce((n, s) => n + pick(s), 0);
    expect(sum((s) => s.counts.succeeded)).toBe(counts.succeeded);
    expect(sampleValue(metrics, "invoice_relay_ingest_rows_read_total")).toBe(sum((s) => s.rows));
    expect(sampleValue(metrics, "invoice_relay_ingest_rows_rejected_total")).toBe(
      sum((s) => s.counts.rejected),
    );
    expect(sum((s) => s.counts.rejected)).toBeGreaterThan(0);

    const byClass = new Map<string, number>();
    for (const attempt of attempts)
      byClass.set(statusClass(attempt), (byClass.get(statusClass(attempt)) ?? 0) + 1);
    const attemptSamples = metrics.get("invoice_relay_http_attempts_total")?.metrics ?? [];
    expect(attemptSamples.reduce((n, m) => n + Number(m.value), 0)).toBe(attempts.length);
    for (const [statusClassSeen, n] of byClass)
      expect([
        statusClassSeen,
        sampleValue(metrics, "invoice_relay_http_attempts_total", { status_class: statusClassSeen }),
      ]).toEqual([statusClassSeen, n]);
    expect([...byClass.keys()].sort()).toEqual(expect.arrayContaining(["2xx", "5xx", "network"]));
    const retried = attempts.filter((a) => a.lost || [429, 503].includes(a.status)).length;
    const retrySamples = metrics.get("invoice_relay_http_retries_total")?.metrics ?? [];
    expect(sampleValue(metrics, "invoice_relay_http_retries_total", { reason: "throttled" })).toBe(
      attempts.filter((a) => !a.lost && a.status === 429).length,
    );
    expect(retrySamples.reduce((n, m) => n + Number(m.value), 0)).toBeGreaterThanOrEqual(retried);
    expect(metrics.get("invoice_relay_http_request_duration_seconds")?.metrics[0]?.count).toBe(
      String(attempts.length),
    );

    expect(sampleValue(metrics, "invoice_relay_redis_up")).toBe(1);
    expect(sampleValue(metrics, "invoice_relay_api_key_refused")).toBe(0);
    expect(sampleValue(metrics, "invoice_relay_ledger_batches")).toBe(summaries.length);
    expect(metrics.get("invoice_relay_batch_waiting_invoices")?.metrics).toEqual([]);
    expect(sampleValue(metrics, "bullmq_job_count", { queue: "invoices", state: "waiting" })).toBe(0);
    expect(sampleValue(metrics, "invoice_relay_process_cpu_seconds_total")).toBeGreaterThan(0);
    const endedAt = sampleValue(metrics, "invoice_relay_last_pass_end_time_seconds");
    expect(endedAt).toBeGreaterThan(Date.now() / 1000 - 600);
    const lastExit = sampleValue(metrics, "invoice_relay_last_pass_exit_code");

    const identifiers = reports.flatMap((r) =>
      r.rows.flatMap((row) => [row.idempotency_key, row.external_id]),
    );
    const leaked = identifiers.filter((id) => id !== "" && text.includes(id));
    expect(leaked).toEqual([]);

    proc.child.kill("SIGTERM");
    const exited = await proc.exited;
    expect(exited.signal).toBeNull();
    expect(lastExit).toBe(exited.code);
    expect(exited.code, proc.output()).toBe(2);
  });

  it("when a run has exited, then the /metrics of a console started afterwards counts what it sent, as Prometheus text", async () => {
    const { sim, seen: attempts } = await faultyService(API_KEY, { seed: 38, lostRate: 0.05 });
    const drop = await tempDropDir();
    cleanups.push(() => sim.close(), drop.cleanup);
    await copySamples(drop.dir);
    const env = cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "fleet-totals", dropDir: drop.dir },
      { BACKOFF_BASE_MS: "50", BACKOFF_CAP_MS: "500" },
    );
    const run = await runCli(["run"], env, 120_000);
    expect(run.code, run.output).toBe(2);

    const consoleProc = spawnNode("workers/cli.js", ["console"], { ...env, HTTP_ADDR: "127.0.0.1:0" });
    cleanups.push(async () => {
      consoleProc.child.kill("SIGTERM");
      await consoleProc.exited;
    });
    const url = await servingUrl(consoleProc);
    const metrics = parseMetrics(await (await fetch(`${url}/metrics`)).text());

    const fleet = (name: string, labels: Record<string, string>) =>
      sampleValue(metrics, `invoice_relay_fleet_${name}`, labels);
    const byClass = new Map<string, number>();
    for (const attempt of attempts)
      byClass.set(statusClass(attempt), (byClass.get(statusClass(attempt)) ?? 0) + 1);
    expect([...byClass.keys()]).toEqual(expect.arrayContaining(["2xx", "5xx"]));
    for (const [statusClassSeen, n] of byClass)
      expect([statusClassSeen, fleet("http_attempts_total", { status_class: statusClassSeen })]).toEqual([
        statusClassSeen,
        n,
      ]);
    // every request the service saw, those whose answers were lost on the way included
    expect(fleet("http_requests_total", {})).toBe(attempts.length);
    const throttled = attempts.filter((a) => !a.lost && a.status === 429).length;
    expect(throttled).toBeGreaterThan(0);
    expect(fleet("http_retries_total", { reason: "throttled" })).toBe(throttled);
    const redis = new Redis(testRedisUrl());
    cleanups.push(async () => {
      redis.disconnect();
      return Promise.resolve();
    });
    const counts = await new RedisLedger(redis, env["QUEUE_PREFIX"] ?? "").counts();
    expect(counts.succeeded).toBeGreaterThan(0);
    expect(fleet("invoices_final_total", { status: "succeeded" })).toBe(counts.succeeded);
    expect(fleet("invoices_final_total", { status: "failed" })).toBe(counts.failed);
    expect(metrics.get("invoice_relay_fleet_http_attempts_total")?.type).toBe("COUNTER");
    // The console itself sent nothing: its own counters are at zero.
    expect(sampleValue(metrics, "invoice_relay_http_attempts_total", { status_class: "2xx" })).toBe(0);
    expect(sampleValue(metrics, "invoice_relay_last_pass_exit_code")).toBe(2);
  });
});
