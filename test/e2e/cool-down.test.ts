import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { createInvoiceQueue } from "../../src/queue/invoice-queue.js";
import { cli, statusJson } from "../cli/ops-support.js";
import { cliEnv } from "../support/cli-env.js";
import { servingUrl, spawnNode } from "../support/processes.js";
import { parseMetrics, sampleValue } from "../support/prometheus-text.js";
import { testRedisUrl } from "../support/redis.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

/** The seconds left the queue page's banner names; undefined when it shows none. */
function bannerSeconds(page: string): number | undefined {
  const match = /Outage cool-down: no new jobs are taken for another (\d+) s/.exec(page.replace(/\s+/g, " "));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

const COOL_DOWN_MS = 10 * 60_000;

describe("an outage cool-down, as the console, status and /metrics show it", () => {
  it("when the queue is put in an outage cool-down as the worker does, then the console's queue page shows its banner, and status --json and /metrics say the same; before it, none of them shows one", async () => {
    const env = cliEnv({ name: "cool-down" }, { HTTP_ADDR: "127.0.0.1:0" });
    const prefix = env["QUEUE_PREFIX"] ?? "";
    const console = spawnNode("workers/cli.js", ["console"], env);
    cleanups.push(async () => {
      if (console.child.exitCode === null && console.child.signalCode === null) console.child.kill("SIGTERM");
      await console.exited;
    });
    const url = await servingUrl(console);
    const redis = new Redis(testRedisUrl());
    const queue = createInvoiceQueue(redis, prefix, 5);
    cleanups.push(async () => {
      await queue.close();
      redis.disconnect();
    });
    const queuePage = async () => (await fetch(`${url}/queue`)).text();
    const coolDownGauge = async () =>
      sampleValue(
        parseMetrics(await (await fetch(`${url}/metrics`)).text()),
        "invoice_relay_outage_cool_down_active",
      );

    const before = await queuePage();
    expect(bannerSeconds(before)).toBeUndefined();
    expect(before).toContain("No outage cool-down in force.");
    expect((await statusJson(env)).cool_down).toBeNull();
    expect(await coolDownGauge()).toBe(0);

    const setAt = Date.now();
    await queue.rateLimit(COOL_DOWN_MS);

    const shown = bannerSeconds(await queuePage());
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThanOrEqual(COOL_DOWN_MS / 1000);
    const status = await statusJson(env);
    const readBy = Date.now();
    expect(status.cool_down).not.toBeNull();
    // read after the page: as long left, or less
    expect(status.cool_down?.remaining_seconds).toBeGreaterThan(0);
    expect(status.cool_down?.remaining_seconds).toBeLessThanOrEqual(shown ?? 0);
    const endsAt = Date.parse(status.cool_down?.ends_at ?? "");
    expect(endsAt).toBeGreaterThanOrEqual(setAt + COOL_DOWN_MS - 1000);
    expect(endsAt).toBeLessThanOrEqual(readBy + COOL_DOWN_MS);
    expect(await coolDownGauge()).toBe(1);
    const text = await cli(["status"], env);
    expect(text.stdout).toContain("OUTAGE COOL-DOWN: no worker takes new invoices for another");
  });
});
