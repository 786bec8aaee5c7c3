import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startSimulator, type SimulatorHandle } from "../../src/simulator/index.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { cliEnv } from "../support/cli-env.js";
import { runCli } from "../support/cli-run.js";
import { readReports, tempDropDir } from "../support/drop.js";
import { startOtlpReceiver, type ReceiverBehaviour } from "../support/otlp-receiver.js";

const API_KEY = "irs_live_traces_key_0123456789";
const cleanups = cleanupsAfterEach();
const CSV = [
  "external_id,currency,destination_country,archive_policy",
  "TR-0001,EUR,DE,eu-10y",
  "TR-0002,EUR,FR,eu-10y",
  "TR-0003,USD,US,us-east-7y",
].join("\n");

const resultLine = z.object({
  idempotency_key: z.string(),
  status: z.string(),
  trace_id: z.string().nullable(),
});

/** A simulator, a drop folder with one file of three invoices, and the CLI's environment for both. */
async function setUp(otel: Record<string, string>) {
  const sim: SimulatorHandle = await startSimulator({ apiKey: API_KEY, seed: 3 });
  const drop = await tempDropDir();
  cleanups.push(() => sim.close(), drop.cleanup);
  await writeFile(join(drop.dir, "traced.csv"), `${CSV}\n`);
  const env = cliEnv({ apiUrl: sim.url, apiKey: API_KEY, dropDir: drop.dir, name: "traces" }, otel);
  return { sim, drop, env };
}

async function receiver(behaviour: ReceiverBehaviour = "accepts") {
  const r = await startOtlpReceiver(behaviour);
  cleanups.push(() => r.close());
  return r;
}

async function results(env: Record<string, string>) {
  const out = await runCli(["results", "--format", "jsonl"], env);
  expect(out.code, out.output).toBe(0);
  return out.output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => resultLine.parse(JSON.parse(line)));
}

describe("traces sent to a collector over OTLP/HTTP", () => {
  it("when ingest and run are two processes with OTEL_EXPORTER_OTLP_ENDPOINT set, then the receiver gets one trace per invoice spanning both, and results names it", async () => {
    const otlp = await receiver();
    const { sim, env } = await setUp({
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "relay-e2e",
    });
    const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url };
    const ingested = await runCli(["ingest"], traced);
    expect(ingested.code, ingested.output).toBe(0);
    const run = await runCli(["run"], traced);
    expect(run.code, run.output).toBe(0);

    expect(new Set(otlp.exports.map((e) => e.path))).toEqual(new Set(["/v1/traces"]));
    const lines = await results(env);
    expect(lines).toHaveLength(3);
    const instances = new Set<unknown>();
    for (const line of lines) {
      expect(line.status).toBe("succeeded");
      const trace = otlp.spans.filter((s) => s.traceId === line.trace_id);
      const named = (name: string) => trace.filter((s) => s.name === name);
      const [create] = named("create invoices");
      const [process] = named("process invoices");
      const [post] = named("POST /api/v1/invoices");
      expect(trace.map((s) => s.name).sort()).toEqual([
        "POST /api/v1/invoices",
        "create invoices",
        "process invoices",
      ]);
      expect(create?.attributes["invoice_relay.idempotency_key"]).toBe(line.idempotency_key);
      expect(process?.parentSpanId).toBe(create?.spanId);
      expect(process?.links).toEqual([{ traceId: line.trace_id, spanId: create?.spanId }]);
      expect(post?.parentSpanId).toBe(process?.spanId);
      expect(post?.attributes["http.response.status_code"]).toBe(201);
      expect(sim.attempts(line.idempotency_key).map((a) => a.traceparent)).toEqual([
        `00-${line.trace_id}-${post?.spanId}-01`,
      ]);
      for (const span of trace) expect(span.resource["service.name"]).toBe("relay-e2e");
      // The job crossed processes: its creation and its attempt come from two instances.
      expect(create?.resource["service.instance.id"]).not.toBe(process?.resource["service.instance.id"]);
      instances.add(create?.resource["service.instance.id"]);
    }
    expect(instances.size).toBe(1);
  });

  it("when the protocol is left to its default, then the exports are OTLP protobuf holding each invoice's trace id", async () => {
    const otlp = await receiver();
    const { env } = await setUp({});
    const run = await runCli(["run"], { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    expect(run.code, run.output).toBe(0);

    expect(otlp.exports.length).toBeGreaterThan(0);
    for (const e of otlp.exports) expect(e.contentType).toBe("application/x-protobuf");
    const sent = Buffer.concat(otlp.exports.map((e) => e.body));
    const lines = await results(env);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(sent.includes(Buffer.from(line.trace_id ?? "", "hex"))).toBe(true);
  });

  it.each<[string, ReceiverBehaviour | "down"]>([
    ["is down", "down"],
    ["answers 500", "answers-500"],
    ["takes the exports and never answers", "never-answers"],
  ])(
    "when the collector %s, then every invoice is sent and reported as usual and the run exits by itself, long before the export timeout",
    async (_what, behaviour) => {
      const otlp = await receiver(behaviour === "down" ? "accepts" : behaviour);
      if (behaviour === "down") await otlp.close();
      const { sim, drop, env } = await setUp({
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        // Were the exit to wait for the exporter, it would wait this long; runCli gives it 30 s.
        OTEL_EXPORTER_OTLP_TIMEOUT: "120000",
      });
      const run = await runCli(["run"], env, 30_000);
      expect(run.signal, run.output).toBeNull();
      expect(run.code, run.output).toBe(0);
      const report = (await readReports(drop.dir)).get("traced.csv");
      expect(report?.rows.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      expect(sim.stats().effects.total).toBe(3);
      if (behaviour === "answers-500") expect(run.output).toContain("traces are not reaching the collector");
    },
  );
});
