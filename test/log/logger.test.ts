import type { DestinationStream } from "pino";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { ConfigError } from "../../src/config/errors/config-error.js";
import { createLogger, resolveLogFormat, type LogFormat } from "../../src/log/logger.js";

const API_KEY = "irs_live_LOGCANARY0123456789";

/** A destination that keeps what the logger wrote. */
function capture(): DestinationStream & { readonly text: () => string } {
  const chunks: string[] = [];
  return {
    write: (chunk: string) => {
      chunks.push(chunk);
    },
    text: () => chunks.join(""),
  };
}

function logOnce(format: LogFormat, isTTY: boolean): string {
  const destination = capture();
  const logger = createLogger({ format, isTTY, destination, secrets: [API_KEY] });
  logger.warn({ file: "a.csv", rows: 3 }, "file read");
  return destination.text();
}

const isJsonLines = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .every((line) => {
      try {
        return typeof JSON.parse(line) === "object";
      } catch {
        return false;
      }
    });

describe("log format", () => {
  it.each([
    ["auto", true, "pretty"],
    ["auto", false, "json"],
    ["json", true, "json"],
    ["json", false, "json"],
    ["pretty", true, "pretty"],
    ["pretty", false, "pretty"],
  ] as const)(
    "when the format is %s and the stream is a terminal: %s, then the logger writes %s",
    (format, isTTY, expected) => {
      expect(resolveLogFormat(format, isTTY)).toBe(expected);
      const text = logOnce(format, isTTY);
      expect(text).toContain("file read");
      expect(isJsonLines(text)).toBe(expected === "json");
    },
  );

  it("when the format resolves to JSON, then each line is the same JSON object as before", () => {
    const line = JSON.parse(logOnce("auto", false)) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 40,
      name: "invoice-relay",
      file: "a.csv",
      rows: 3,
      msg: "file read",
    });
    expect(Object.keys(line)).toEqual(["level", "time", "pid", "name", "file", "rows", "msg"]);
  });

  it("when the format is pretty, then a line shows the level, the message and each field for a person", () => {
    const text = logOnce("pretty", false);
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN \(invoice-relay\): file read\n/);
    expect(text).toContain('file: "a.csv"');
    expect(text).toContain("rows: 3");
  });

  it("when the stream is a terminal, then the pretty text is coloured, and forced pretty elsewhere is not", () => {
    expect(logOnce("auto", true)).toContain("\u001b[");
    expect(logOnce("pretty", false)).not.toContain("\u001b[");
  });

  it.each(["json", "pretty"] as const)(
    "when the API key is logged in fields and in the message in %s format, then it is redacted everywhere",
    (format) => {
      const destination = capture();
      const logger = createLogger({ format, isTTY: format === "pretty", destination, secrets: [API_KEY] });
      logger.error(
        {
          apiKey: API_KEY,
          headers: { authorization: `Bearer ${API_KEY}` },
          detail: `the service refused ${API_KEY}`,
          err: new Error(`request with ${API_KEY} failed`),
        },
        `sending with key ${API_KEY} failed`,
      );
      const text = destination.text();
      expect(text).toContain("sending with key [redacted] failed");
      expect(text).toContain("the service refused [redacted]");
      expect(text).toContain("request with [redacted] failed");
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain("LOGCANARY");
    },
  );
});

describe("names in log lines", () => {
  const name = "fake\nline\u202Ecsv.csv";

  it("when a message or a field holds a line break or a bidi control, then the pretty text shows them escaped and each entry keeps its own lines", () => {
    const destination = capture();
    const logger = createLogger({ format: "pretty", isTTY: false, destination });
    logger.error({ file: name, err: new Error(`cannot read ${name}`) }, `file ${name} left`);
    const text = destination.text();
    expect(text).not.toContain("\u202E");
    expect(text).not.toContain("fake\nline");
    expect(text).toContain("file fake\\nline\\u202ecsv.csv left");
    expect(text).toContain("cannot read fake\\nline\\u202ecsv.csv");
    expect(text.split("\n")[0]).toMatch(/ERROR .*file fake.*left$/);
  });

  it("when a field holds a bidi control, then the JSON line writes it as an escape, the same JSON value", () => {
    const destination = capture();
    createLogger({ format: "json", isTTY: false, destination }).warn({ file: name }, "m");
    const line = destination.text();
    expect(line).not.toContain("\u202E");
    expect(line).toContain("\\u202e");
    expect((JSON.parse(line) as { file: string }).file).toBe(name);
  });
});

describe("LOG_FORMAT", () => {
  it("when it is not set, then it is auto", () => {
    expect(loadConfig({}).logFormat).toBe("auto");
  });

  it("when it is json or pretty, then that format is forced", () => {
    expect(loadConfig({ LOG_FORMAT: "json" }).logFormat).toBe("json");
    expect(loadConfig({ LOG_FORMAT: "pretty" }).logFormat).toBe("pretty");
  });

  it("when it is anything else, then the error names LOG_FORMAT and the allowed values", () => {
    let problems: readonly string[] = [];
    try {
      loadConfig({ LOG_FORMAT: "fancy" });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^LOG_FORMAT .*auto.*json.*pretty/);
  });
});
