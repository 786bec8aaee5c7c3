import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseReport } from "../support/drop.js";
import { testInvoice, testInvoices, type KeyedInvoice } from "../support/invoices.js";
import { cli, dropCsv, opsSetup, poisonKey, statusJson, type OpsSetup } from "./ops-support.js";

describe("status and results after a night with succeeded, failed and rejected rows", () => {
  let setup: OpsSetup;
  let invoices: KeyedInvoice[];
  let batchId: string;
  const BAD_ROW = "BAD-1,XYZ,DE,eu-1y";

  beforeAll(async () => {
    setup = await opsSetup();
    invoices = testInvoices(4, `night-${randomUUID()}`);
    // The second invoice's key was used at the service for another body: it fails with 422.
    await poisonKey(setup.sim, invoices[1]?.key ?? "", testInvoice(99, `other-${randomUUID()}`).invoice);
    await dropCsv(setup.dir, "night.csv", invoices, [BAD_ROW]);
    const run = await cli(["run"], setup.env);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    batchId = (await statusJson(setup.env)).batches[0]?.id ?? "";
  });
  afterAll(() => setup.cleanup());

  it("when status --json is asked, then it prints one object with key counts, queue counts and the batch", async () => {
    const status = await statusJson(setup.env);
    expect(status.queue_prefix).toBe(setup.env["QUEUE_PREFIX"]);
    expect(status.keys).toEqual({ queued: 0, retrying: 0, succeeded: 3, failed: 1, superseded: 0 });
    expect(status.queue).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
      paused: 0,
      is_paused: false,
    });
    expect(status.key_refused).toBeNull();
    expect(status.batches_total).toBe(1);
    expect(status.batches).toHaveLength(1);
    expect(status.batches[0]).toMatchObject({
      id: batchId,
      file: "night.csv",
      state: "reported",
      rows: 5,
      valid_rows: 4,
      pending: 0,
      counts: { succeeded: 3, duplicate: 0, rejected: 1, failed: 1, conflict: 0, superseded: 0, pending: 0 },
    });
    expect(status.batches[0]?.report_csv).toMatch(/reports\/night\.csv\..+\.results\.csv$/);
    // the batch has a failed row: it is kept past its retention until retried (docs/ledger.md, "Retention")
    expect(status.ledger).toMatchObject({
      records: 4,
      batches: 1,
      retention: "7d",
      oldest_batch: { id: batchId, expires_at: null, kept_because: "failed rows" },
    });
    expect(status.ledger.bytes).toBeGreaterThan(0);
    expect(await statusJson(setup.env, ["--batch", batchId])).toMatchObject({ batches: [{ id: batchId }] });
  });

  it("when status is asked after the run, then it lists the run's pass with its files, outcomes and exit code", async () => {
    const status = await statusJson(setup.env);
    expect(status.passes).toHaveLength(1);
    const [pass] = status.passes;
    expect(pass).toMatchObject({
      kind: "run",
      files: 1,
      invoices: { succeeded: 3, rejected: 1, failed: 1 },
      refused: 0,
      exit_code: 2,
    });
    expect(Date.parse(pass?.ended_at ?? "")).toBeGreaterThanOrEqual(Date.parse(pass?.started_at ?? ""));
    expect(pass?.busiest_second).toBeGreaterThan(0);
    const { stdout } = await cli(["status"], setup.env);
    expect(stdout).toContain("passes: the last 1, most recent first");
    const row = stdout.split("\n").find((l) => l.startsWith(pass?.id ?? "?")) ?? "";
    expect(row).toMatch(/ run +\S+ +\d+ (s|min) .*1 +0 +\d+ requests +2 +3 succeeded, 1 rejected, 1 failed$/);
  });

  it("when status is asked without --json, then a table names the batch, its counts, its report and what to do about the failure", async () => {
    const { code, stdout } = await cli(["status"], setup.env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/queued 0 +retrying 0 +succeeded 3 +failed 1/);
    expect(stdout).toMatch(/waiting 0 .*\(running\)/);
    expect(stdout).toMatch(
      /ledger +4 records +1 batches +about [\d.]+ MB.*retention 7d, oldest batch \S+ is kept: its report has failed rows/,
    );
    const row = stdout.split("\n").find((l) => l.startsWith(batchId)) ?? "";
    expect(row).toMatch(/night\.csv +reported +5 +4 +0 +3 +0 +1 +1 +0 +0 +\/.+\.results\.csv$/);
    expect(stdout).toContain("1 invoice(s) failed");
    expect(stdout).toContain("`invoice-relay retry`");
  });

  it("when results --batch is asked as csv, then it prints exactly the batch's report", async () => {
    const status = await statusJson(setup.env);
    const report = await readFile(status.batches[0]?.report_csv ?? "", "utf8");
    const { code, stdout, stderr } = await cli(["results", "--batch", batchId], setup.env);
    expect(code, stderr).toBe(0);
    expect(stdout).toBe(report);
    const rows = parseReport(stdout).rows;
    expect(rows.map((r) => r.status)).toEqual(["succeeded", "failed", "succeeded", "succeeded", "rejected"]);
    expect(rows[1]).toMatchObject({ idempotency_key: invoices[1]?.key, http_status: "422" });
  });

  it("when results --batch is asked as jsonl, then each row is an object with the report's field names", async () => {
    const { code, stdout } = await cli(["results", "--batch", batchId, "--format", "jsonl"], setup.env);
    expect(code).toBe(0);
    const rows = stdout
      .trimEnd()
      .split("\n")
      .map((l): unknown => JSON.parse(l));
    expect(rows).toHaveLength(5);
    expect(rows[0]).toEqual({
      line: 2,
      external_id: invoices[0]?.invoice.external_id,
      idempotency_key: invoices[0]?.key,
      status: "succeeded",
      http_status: 201,
      correlation_id: expect.any(String) as unknown,
      ruleset_version: "2026-10-16.1",
      attempts: 1,
      error: null,
    });
    expect(rows[1]).toMatchObject({
      status: "failed",
      http_status: 422,
      error: expect.any(String) as unknown,
    });
    expect(rows[4]).toMatchObject({ line: 6, status: "rejected", idempotency_key: null, attempts: null });
  });

  it("when results is asked without --batch, then every result record of the prefix is exported once, without the response body", async () => {
    const csv = await cli(["results"], setup.env);
    expect(csv.code).toBe(0);
    const [header, ...lines] = csv.stdout.trimEnd().split("\r\n");
    expect(header).toBe(
      "idempotency_key,external_id,status,http_status,correlation_id,ruleset_version,attempts,batch,line,first_attempt_at,last_attempt_at,error,trace_id",
    );
    expect(lines.map((l) => l.split(",")[0]).sort()).toEqual(invoices.map((i) => i.key).sort());

    const jsonl = await cli(["results", "--format", "jsonl"], setup.env);
    const records = jsonl.stdout
      .trimEnd()
      .split("\n")
      .map((l) => z.record(z.string(), z.unknown()).parse(JSON.parse(l)));
    expect(records).toHaveLength(4);
    const failed = records.find((r) => r["idempotency_key"] === invoices[1]?.key);
    expect(failed).toMatchObject({
      status: "failed",
      http_status: 422,
      batch: batchId,
      line: 3,
      attempts: 1,
    });
    expect(failed?.["last_attempt_at"]).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(records.filter((r) => "response_body" in r)).toEqual([]);
  });

  it("when results --with-body is asked, then the stored response bodies are included", async () => {
    const { code, stdout } = await cli(["results", "--format", "jsonl", "--with-body"], setup.env);
    expect(code).toBe(0);
    const succeeded = stdout
      .trimEnd()
      .split("\n")
      .map((l) => z.object({ status: z.string(), response_body: z.string().nullable() }).parse(JSON.parse(l)))
      .filter((r) => r.status === "succeeded");
    expect(succeeded).toHaveLength(3);
    expect(succeeded.filter((r) => !(r.response_body ?? "").includes("ruleset_version"))).toEqual([]);
  });

  it("when --batch names an unknown batch, then status, retry and results say so and exit 1", async () => {
    for (const command of ["status", "retry", "results"]) {
      const { code, stdout, stderr } = await cli([command, "--batch", "20990101T000000Z-000000"], setup.env);
      expect(code, command).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toContain('batch "20990101T000000Z-000000" is not known');
      expect(stderr).toContain("invoice-relay status");
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("when --batch is not of the batch id shape (<id>:keys names another ledger name), then status, retry and results refuse it naming the shape and exit 1", async () => {
    // Checked before Redis is opened: with Redis out of reach the answer is the same.
    const away = { ...setup.env, REDIS_URL: "redis://127.0.0.1:9/0" };
    for (const [env, id] of [
      [setup.env, `${batchId}:keys`],
      [away, "B1"],
    ] as const)
      for (const command of ["status", "retry", "results"]) {
        const { code, stdout, stderr } = await cli([command, "--batch", id], env);
        expect(code, `${command} ${id}`).toBe(1);
        expect(stdout).toBe("");
        expect(stderr).toContain(
          `--batch "${id}" is not a batch id: a batch id looks like YYYYMMDDTHHMMSSZ-xxxxxx`,
        );
        expect(stderr).toContain("`invoice-relay status` lists the batches");
      }
  });
});
