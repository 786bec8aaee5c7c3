import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parseReport } from "../support/drop.js";
import { testInvoice, testInvoices } from "../support/invoices.js";
import { cli, dropCsv, opsSetup, poisonKey, statusJson, type OpsSetup } from "./ops-support.js";
import { cleanupsAfterEach } from "../support/cleanups.js";

const cleanups = cleanupsAfterEach();

async function setup(...args: Parameters<typeof opsSetup>): Promise<OpsSetup> {
  const s = await opsSetup(...args);
  cleanups.push(() => s.cleanup());
  return s;
}

async function reportOf(env: Record<string, string>, file: string) {
  const batch = (await statusJson(env)).batches.find((b) => b.file === file);
  return { batch, rows: parseReport(await readFile(batch?.report_csv ?? "", "utf8")).rows };
}

describe("invoice-relay retry", () => {
  it("when invoices failed while the service was down and it is healthy again, then retry re-enqueues only those, each is sent once more, and the batch is reported again", async () => {
    const { sim, dir, env } = await setup({ errorRate: 1 }, { MAX_ATTEMPTS: "1" });
    const invoices = testInvoices(3, `outage-${randomUUID()}`);
    await dropCsv(dir, "night.csv", invoices, ["BAD-1,XYZ,DE,eu-1y"]);
    expect((await cli(["run"], env)).code).toBe(2);
    expect((await statusJson(env)).keys).toMatchObject({ failed: 3, succeeded: 0 });

    sim.setFaults({ errorRate: 0 });
    const retry = await cli(["retry"], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain("re-enqueued 3 failed invoice(s) with their original keys");
    expect(retry.stdout).toContain("`invoice-relay run`");
    const waiting = await statusJson(env);
    expect(waiting.keys).toEqual({ queued: 3, retrying: 0, succeeded: 0, failed: 0, superseded: 0 });
    expect(waiting.queue.waiting).toBe(3);
    expect(waiting.batches[0]).toMatchObject({ state: "ingested", pending: 3 });

    const again = await cli(["run"], env);
    expect(again.code, again.stdout + again.stderr).toBe(2); // the rejected row stays rejected
    const { batch, rows } = await reportOf(env, "night.csv");
    expect(batch).toMatchObject({ state: "reported", pending: 0 });
    expect(batch?.counts).toMatchObject({ succeeded: 3, rejected: 1, failed: 0 });
    expect(rows.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "rejected"]);
    expect(rows.slice(0, 3).map((r) => r.idempotency_key)).toEqual(invoices.map((i) => i.key));
    for (const inv of invoices) expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([503, 201]);
    expect(sim.stats().effects).toMatchObject({ total: 3, distinctKeys: 3, keysWithMultipleEffects: 0 });

    const nothing = await cli(["retry"], env);
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toContain("nothing to retry");
  });

  it("when retry --batch is given, then only the failed invoices of that batch are re-enqueued", async () => {
    const { sim, dir, env } = await setup({ errorRate: 1 }, { MAX_ATTEMPTS: "1" });
    const tag = randomUUID();
    const first = testInvoices(2, `a-${tag}`);
    const second = testInvoices(2, `b-${tag}`);
    await dropCsv(dir, "a.csv", first);
    await dropCsv(dir, "b.csv", second);
    expect((await cli(["run"], env)).code).toBe(2);
    const a = (await statusJson(env)).batches.find((b) => b.file === "a.csv");

    sim.setFaults({ errorRate: 0 });
    const retry = await cli(["retry", "--batch", a?.id ?? ""], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain(`re-enqueued 2 failed invoice(s) of batch ${a?.id ?? ""}`);
    expect((await statusJson(env)).keys).toMatchObject({ queued: 2, failed: 2 });

    // Only batch a waits again, so the pass ends when it is reported, all succeeded.
    expect((await cli(["run"], env)).code).toBe(0);
    expect((await reportOf(env, "a.csv")).rows.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    expect((await reportOf(env, "b.csv")).rows.map((r) => r.status)).toEqual(["failed", "failed"]);
    for (const inv of second) expect(sim.attempts(inv.key).map((a) => a.status)).toEqual([503]);
    expect((await statusJson(env)).keys).toMatchObject({ succeeded: 2, failed: 2, queued: 0 });
  });

  it("when a key failed with 422 and its cause remains, then retry sends only that key again, once, and it fails again", async () => {
    const { sim, dir, env } = await setup();
    const invoices = testInvoices(2, `reuse-${randomUUID()}`);
    const poisoned = invoices[0]?.key ?? "";
    await poisonKey(sim, poisoned, testInvoice(7, `other-${randomUUID()}`).invoice);
    await dropCsv(dir, "night.csv", invoices);
    expect((await cli(["run"], env)).code).toBe(2);

    const retry = await cli(["retry"], env);
    expect(retry.stdout).toContain("re-enqueued 1 failed invoice(s)");
    expect((await cli(["run"], env)).code).toBe(2);

    expect(sim.attempts(poisoned).map((a) => a.status)).toEqual([201, 422, 422]);
    expect(sim.attempts(invoices[1]?.key ?? "").map((a) => a.status)).toEqual([201]);
    const { rows } = await reportOf(env, "night.csv");
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ["failed", "2"],
      ["succeeded", "1"],
    ]);
  });
});
