import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TracingConfigError } from "../../src/tracing/errors/tracing-config-error.js";
import { formatTraceparent, parseTraceparent, traceparentSchema } from "../../src/tracing/trace-context.js";
import { tracingSettings } from "../../src/tracing/tracing-settings.js";

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };

describe("when tracing is on (the OTEL_* variables alone)", () => {
  it("when no OTEL_* variable is set, then tracing is off", () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(tracingSettings({ OTEL_SERVICE_NAME: "relay", OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBeUndefined();
  });

  it("when an endpoint or OTEL_TRACES_EXPORTER=otlp is set, then tracing is on, over OTLP/HTTP protobuf by default", () => {
    expect(tracingSettings(ENDPOINT)).toEqual({ protocol: "http/protobuf" });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toEqual({
      protocol: "http/protobuf",
    });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: "otlp" })).toEqual({ protocol: "http/protobuf" });
    expect(tracingSettings({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toEqual({
      protocol: "http/json",
    });
    expect(
      tracingSettings({
        ...ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      }),
    ).toEqual({ protocol: "http/json" });
  });

  it("when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, then tracing is off whatever else is set", () => {
    expect(tracingSettings({ ...ENDPOINT, OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(tracingSettings({ ...ENDPOINT, OTEL_SDK_DISABLED: "TRUE" })).toBeUndefined();
    expect(tracingSettings({ ...ENDPOINT, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
    expect(tracingSettings({ ...ENDPOINT, OTEL_SDK_DISABLED: "false" })).toEqual({
      protocol: "http/protobuf",
    });
  });

  it("when a variable asks for what the relay does not do, then one error names each, with the fix", () => {
    const refused = (() => {
      try {
        tracingSettings({
          ...ENDPOINT,
          OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
          OTEL_TRACES_EXPORTER: "zipkin",
          OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
          OTEL_TRACES_SAMPLER_ARG: "2",
        });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(TracingConfigError);
    expect(refused).toMatchObject({ code: "TRACING_CONFIG_INVALID" });
    const problems = (refused as TracingConfigError).problems;
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^OTEL_TRACES_EXPORTER=zipkin: .*set otlp/);
    expect(problems[1]).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL=grpc: .*http\/protobuf/);
    expect(problems[2]).toMatch(/^OTEL_TRACES_SAMPLER_ARG=2: .*from 0 to 1/);
    expect(() => tracingSettings({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "jaeger_remote" })).toThrow(
      /OTEL_TRACES_SAMPLER=jaeger_remote: not a sampler/,
    );
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: "console" })).toThrow(
      /OTEL_TRACES_EXPORTER=console/,
    );
  });
});

describe("the W3C traceparent a job carries", () => {
  const hex = (length: number) =>
    fc.string({
      unit: fc.constantFrom(...Array.from("0123456789abcdef")),
      minLength: length,
      maxLength: length,
    });

  it("when a trace id, span id and sampled flag are written and read back, then they are the same", () => {
    fc.assert(
      fc.property(
        hex(32).filter((t) => /[1-9a-f]/.test(t)),
        hex(16).filter((s) => /[1-9a-f]/.test(s)),
        fc.boolean(),
        (traceId, spanId, sampled) => {
          const text = formatTraceparent({ traceId, spanId, sampled });
          expect(traceparentSchema.safeParse(text).success).toBe(true);
          expect(parseTraceparent(text)).toEqual({ traceId, spanId, sampled });
        },
      ),
    );
  });

  it("when a traceparent is malformed, then it is refused: all-zero ids, upper case, another version, wrong lengths", () => {
    for (const bad of [
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
      "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
    ]) {
      expect(traceparentSchema.safeParse(bad).success, bad).toBe(false);
      expect(parseTraceparent(bad), bad).toBeUndefined();
    }
    expect(parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03")?.sampled).toBe(true);
  });
});
