import { describe, expect, it } from "vitest";
import { z } from "zod";
import { superviseExporter } from "../../src/cli/exporter-supervisor.js";
import type { ExporterThreadSettings } from "../../src/cli/exporter-thread-settings.js";
import { createLogger } from "../../src/log/logger.js";
import { until } from "../support/processes.js";

const settings: ExporterThreadSettings = {
  redis: { kind: "single", url: "redis://127.0.0.1:6379" },
  prefix: "supervisor-test",
  databaseUrl: "postgres://relay:secret-password@127.0.0.1:5432/results",
  claimIdleMs: 30_000,
  log: { level: "info", format: "json", isTTY: false, secrets: [] },
};

const logLine = z.looseObject({ level: z.number(), msg: z.string() });

function capturedLogger() {
  const lines: z.infer<typeof logLine>[] = [];
  const logger = createLogger({
    format: "json",
    isTTY: false,
    destination: {
      write: (line: string) => {
        lines.push(logLine.parse(JSON.parse(line)));
      },
    },
  });
  return { logger, lines };
}

/** Stand-ins for exporter-thread.js. */
const threadSource = (code: string) => new URL(`data:text/javascript,${encodeURIComponent(code)}`);
const dies = threadSource(`throw new Error("the exporter thread failed at its start");`);
const stopsWhenAsked = threadSource(`
import { parentPort } from "node:worker_threads";
parentPort.on("message", (message) => {
  if (message?.type !== "stop") return;
  parentPort.postMessage({ type: "stopped", exported: 7, refused: 1 });
  parentPort.close();
});`);

const startsLate = threadSource(`
import { parentPort } from "node:worker_threads";
setTimeout(() => parentPort.postMessage({ type: "started" }), 50);
parentPort.on("message", (message) => {
  if (message?.type !== "stop") return;
  parentPort.postMessage({ type: "stopped", exported: 0, refused: 0 });
  parentPort.close();
});`);

describe("exporter supervisor", () => {
  it("when the thread says it started, then started() is true; while it cannot start, then started() is false once the wait is over", async () => {
    const { logger } = capturedLogger();
    const late = superviseExporter(settings, logger, { entry: startsLate });
    const failing = superviseExporter(settings, logger, { entry: dies, restartMs: 10, restartCapMs: 40 });
    try {
      expect(await late.started(10_000)).toBe(true);
      expect(await failing.started(300)).toBe(false);
    } finally {
      await late.stop();
      await failing.stop();
    }
  });

  it("when the exporter thread dies, then an error is logged each time and it is started again", async () => {
    const { logger, lines } = capturedLogger();
    const supervisor = superviseExporter(settings, logger, {
      entry: dies,
      restartMs: 10,
      restartCapMs: 40,
    });
    await until(() => Promise.resolve(supervisor.starts() >= 3), 30_000, "the thread started three times");
    await supervisor.stop();
    const errors = lines.filter((l) => l.level === 50);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors[0]).toMatchObject({
      msg: expect.stringContaining("stopped unexpectedly; it is started again") as unknown,
      reason: "the exporter thread failed at its start",
      exitCode: 1,
    });
    // bounded backoff: doubled at each death
    expect(errors.slice(0, 2).map((l) => l["restartInMs"])).toEqual([10, 20]);
    expect(JSON.stringify(lines)).not.toContain("secret-password");
  });

  it("when asked to stop, then the thread ends after saying what it exported and is not started again", async () => {
    const { logger, lines } = capturedLogger();
    const supervisor = superviseExporter(settings, logger, { entry: stopsWhenAsked });
    await supervisor.stop();
    expect(supervisor.starts()).toBe(1);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "exporter stopped", exported: 7, refused: 1 }),
    );
  });
});
