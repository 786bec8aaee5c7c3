import { z } from "zod";
import { TracingConfigError } from "./errors/tracing-config-error.js";

/**
 * Whether tracing is on, from OpenTelemetry's standard variables only (docs/operations.md, "Traces").
 * Tracing is on when an OTLP endpoint is named (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp, unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none: unset, nothing of OpenTelemetry is loaded. The rest (service name, sampler,
 * headers, timeouts, batch sizes) the SDK reads itself. Pure.
 */
export interface TracingSettings {
  /** OTLP over HTTP: protobuf (the specification's default) or JSON. */
  readonly protocol: "http/protobuf" | "http/json";
}

const optional = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value.trim()));

const otelEnv = z.object({
  OTEL_SDK_DISABLED: optional,
  OTEL_TRACES_EXPORTER: optional,
  OTEL_EXPORTER_OTLP_ENDPOINT: optional,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional,
  OTEL_EXPORTER_OTLP_PROTOCOL: optional,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional,
  OTEL_TRACES_SAMPLER: optional,
  OTEL_TRACES_SAMPLER_ARG: optional,
});

const PROTOCOLS = ["http/protobuf", "http/json"] as const;
/** The samplers of the specification that need nothing beyond the SDK. */
const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

export function tracingSettings(
  env: Readonly<Record<string, string | undefined>>,
): TracingSettings | undefined {
  const vars = otelEnv.parse(env);
  if (vars.OTEL_SDK_DISABLED?.toLowerCase() === "true") return undefined;
  const exporters = (vars.OTEL_TRACES_EXPORTER ?? "")
    .toLowerCase()
    .split(",")
    .map((e) => e.trim());
  if (exporters.includes("none")) return undefined;
  const endpoint = vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? vars.OTEL_EXPORTER_OTLP_ENDPOINT;
  // An exporter the relay does not have is refused even without an endpoint: asked for, never silent.
  const others = exporters.filter((e) => e !== "" && e !== "otlp");
  if (endpoint === undefined && !exporters.includes("otlp") && others.length === 0) return undefined;

  const problems: string[] = [];
  if (others.length > 0)
    problems.push(
      `OTEL_TRACES_EXPORTER=${vars.OTEL_TRACES_EXPORTER ?? ""}: invoice-relay exports traces over OTLP only; set otlp (or none)`,
    );
  const protocolVar =
    vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL === undefined
      ? "OTEL_EXPORTER_OTLP_PROTOCOL"
      : "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
  const protocol = (
    vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    vars.OTEL_EXPORTER_OTLP_PROTOCOL ??
    "http/protobuf"
  ).toLowerCase();
  const http = PROTOCOLS.find((p) => p === protocol);
  if (http === undefined)
    problems.push(
      `${protocolVar}=${protocol}: invoice-relay sends OTLP over HTTP; set http/protobuf (the default) or http/json, and the collector's HTTP port (4318)`,
    );
  const sampler = vars.OTEL_TRACES_SAMPLER?.toLowerCase();
  if (sampler !== undefined && !SAMPLERS.includes(sampler))
    problems.push(
      `OTEL_TRACES_SAMPLER=${sampler}: not a sampler invoice-relay has; use one of ${SAMPLERS.join(", ")}`,
    );
  const ratio = vars.OTEL_TRACES_SAMPLER_ARG;
  if (sampler?.endsWith("traceidratio") === true && ratio !== undefined && !isRatio(ratio))
    problems.push(`OTEL_TRACES_SAMPLER_ARG=${ratio}: the share of traces to keep, from 0 to 1 (e.g. 0.1)`);
  if (problems.length > 0) throw new TracingConfigError(problems);
  return { protocol: http ?? "http/protobuf" };
}

function isRatio(text: string): boolean {
  const value = Number(text);
  return Number.isFinite(value) && value >= 0 && value <= 1;
}
