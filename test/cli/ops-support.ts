import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { expect } from "vitest";
import { z } from "zod";
import { invoiceJson } from "../../src/invoice/key.js";
import { ROW_STATUSES } from "../../src/ledger/statuses.js";
import type { CanonicalInvoice } from "../../src/invoice/schema.js";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { tempDropDir } from "../support/drop.js";
import type { KeyedInvoice } from "../support/invoices.js";
import { childEnv, distPath } from "../support/processes.js";
import { cliEnv } from "../support/cli-env.js";
import { SPEED_LIMITS } from "../../src/queue/speed-limit.js";

export const API_KEY = "irs_live_ops_key_0123456789";

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI as an operator would, with the environment only; stdout and stderr kept apart. */
export function cli(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn(process.execPath, [distPath("workers/cli.js"), ...args], {
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.once("close", (code) => {
      resolve({ code, stdout, stderr });
    }),
  );
}

export interface OpsSetup {
  readonly sim: SimulatorHandle;
  readonly dir: string;
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A simulator, a temp drop folder and the environment of a deployment with its own QUEUE_PREFIX. */
export async function opsSetup(
  simOptions: Parameters<typeof startSimulator>[0] = {},
  env: Record<string, string> = {},
): Promise<OpsSetup> {
  const sim = await startSimulator({ apiKey: API_KEY, seed: 11, ...simOptions });
  const drop = await tempDropDir();
  return {
    sim,
    dir: drop.dir,
    env: cliEnv(
      { apiUrl: sim.url, apiKey: API_KEY, name: "ops", dropDir: drop.dir },
      {
        BACKOFF_BASE_MS: "50",
        BACKOFF_CAP_MS: "500",
        ...env,
      },
    ),
    cleanup: async () => {
      await sim.close();
      await drop.cleanup();
    },
  };
}

/** A drop file of the given invoices (one per line from line 2), plus raw extra lines appended. */
export async function dropCsv(
  dir: string,
  name: string,
  invoices: readonly KeyedInvoice[],
  extraLines: readonly string[] = [],
): Promise<void> {
  const lines = invoices.map(
    ({ invoice: i }) =>
      `${i.external_id},${i.currency},${i.routing.destination_country},${i.routing.archive_policy}`,
  );
  const body = ["external_id,currency,destination_country,archive_policy", ...lines, ...extraLines];
  await writeFile(join(dir, name), `${body.join("\n")}\n`);
}

/** Uses `key` at the service for another body first, so the real invoice is refused with 422. */
export async function poisonKey(sim: SimulatorHandle, key: string, other: CanonicalInvoice): Promise<void> {
  const response = await request(`${sim.url}/api/v1/invoices`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${API_KEY}`,
      "idempotency-key": key,
      "content-type": "application/json",
    },
    body: invoiceJson(other),
  });
  await response.body.dump();
}

const iso = z.iso.datetime();
const counts = z.strictObject({
  succeeded: z.number(),
  duplicate: z.number(),
  rejected: z.number(),
  failed: z.number(),
  conflict: z.number(),
  superseded: z.number(),
  pending: z.number(),
});
/** The documented shape of `status --json` (src/cli/status-report.ts): every field, nothing more. */
const statusJsonSchema = z.strictObject({
  queue_prefix: z.string(),
  generated_at: iso,
  keys: z.strictObject({
    queued: z.number(),
    retrying: z.number(),
    succeeded: z.number(),
    failed: z.number(),
    superseded: z.number(),
  }),
  queue: z.strictObject({
    waiting: z.number(),
    active: z.number(),
    delayed: z.number(),
    failed: z.number(),
    paused: z.number(),
    is_paused: z.boolean(),
  }),
  key_refused: z
    .strictObject({ http_status: z.number(), detail: z.string(), at: iso, action: z.string() })
    .nullable(),
  cool_down: z.strictObject({ remaining_seconds: z.number(), ends_at: iso }).nullable(),
  batches: z.array(
    z.strictObject({
      id: z.string(),
      file: z.string(),
      format: z.enum(["csv", "json", "ndjson"]),
      state: z.enum(["ingesting", "ingested", "rejected", "reported"]),
      host: z.string().nullable(),
      path: z.string(),
      created_at: iso,
      ingested_at: iso.nullable(),
      completed_at: iso.nullable(),
      reported_at: iso.nullable(),
      rows: z.number().nullable(),
      valid_rows: z.number().nullable(),
      pending: z.number().nullable(),
      report_csv: z.string().nullable(),
      summary_json: z.string().nullable(),
      file_error: z.string().nullable(),
      replaced_by: z.string().nullable(),
      counts: counts.nullable(),
    }),
  ),
  batches_total: z.number(),
  ledger: z.strictObject({
    records: z.number(),
    batches: z.number(),
    bytes: z.number().nullable(),
    redis_used_memory: z.number().nullable(),
    retention: z.string(),
    oldest_batch: z
      .strictObject({
        id: z.string(),
        created_at: iso,
        expires_at: iso.nullable(),
        kept_because: z.enum(["not reported", "failed rows"]).nullable(),
      })
      .nullable(),
  }),
  outbox: z.strictObject({
    on: z.boolean(),
    entries: z.number(),
    oldest_at: iso.nullable(),
    oldest_age_seconds: z.number().nullable(),
    refused: z.number(),
  }),
  results_database: z
    .strictObject({ url: z.string(), answers: z.boolean(), problem: z.string().nullable() })
    .nullable(),
  sending: z
    .strictObject({
      learned_per_sec: z.number(),
      fleet_sent_per_sec: z.number(),
      fleet_accepted_per_sec: z.number(),
      held_until: z.string().nullable(),
      capped_by_concurrency: z.boolean(),
      phase: z.enum(["probing", "holding", "backing-off"]),
      refusing_since: iso.nullable(),
      refusing_for_capacity: z.boolean(),
    })
    .nullable(),
  speed: z.strictObject({
    limit: z.enum(SPEED_LIMITS),
    since: iso.nullable(),
    until: iso.nullable(),
    words: z.string(),
    ends_at: iso.nullable(),
    deadline: iso.nullable(),
    end_words: z.string().nullable(),
  }),
  passes: z.array(
    z.strictObject({
      id: z.string(),
      kind: z.enum(["run", "scan"]),
      started_at: iso,
      ended_at: iso.nullable(),
      files: z.number(),
      invoices: z.partialRecord(z.enum([...ROW_STATUSES, "pending"]), z.number()),
      refused: z.number().nullable(),
      busiest_second: z.number().nullable(),
      learned_rate: z.number().nullable(),
      ended_without_word: z.boolean(),
      exit_code: z.number().nullable(),
      left: z.array(z.strictObject({ where: z.string(), file: z.string(), why: z.string() })),
      left_out: z.number(),
    }),
  ),
  sftp_sources: z.array(
    z.strictObject({
      name: z.string(),
      last_poll_at: iso.nullable(),
      waiting: z.number(),
      taken: z.number(),
      reports_pending: z.number(),
      last_error: z.string().nullable(),
      last_error_at: iso.nullable(),
      failures: z.number(),
    }),
  ),
});

/** `status --json`, checked against its documented shape. */
export async function statusJson(env: Record<string, string>, args: readonly string[] = []) {
  const result = await cli(["status", "--json", ...args], env);
  expect(result.code, result.stderr).toBe(0);
  return statusJsonSchema.parse(JSON.parse(result.stdout));
}
