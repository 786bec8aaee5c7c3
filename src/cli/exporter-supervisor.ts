import { Worker } from "node:worker_threads";
import type { Logger } from "../log/logger.js";
import { within } from "../ops/within.js";
import { startedMessage, stoppedMessage, type ExporterThreadSettings } from "./exporter-thread-settings.js";

export interface ExporterSupervisorOptions {
  /** The thread's entry (default: the built exporter-thread.js beside this file). */
  readonly entry?: URL;
  /** First wait before a thread that died is started again; doubled at each death, up to `restartCapMs`. */
  readonly restartMs?: number;
  readonly restartCapMs?: number;
  /** A thread that ran this long before it died starts its backoff afresh. */
  readonly healthyMs?: number;
  /** After the thread said it stopped, how long it may take to end before it is terminated. */
  readonly exitGraceMs?: number;
}

export interface ExporterSupervisor {
  /** Times the thread was started (1 + restarts). */
  readonly starts: () => number;
  /**
   * Resolves once a thread says it is exporting (its modules loaded, its pool open), or after `ms`
   * (false then: it is still starting, or waiting for PostgreSQL, and goes on trying).
   */
  started(ms: number): Promise<boolean>;
  /** Asks the thread to stop after the read in hand and waits until it has ended; no restart after. */
  stop(): Promise<void>;
}

function describe(reason: unknown): string | undefined {
  if (reason instanceof Error) return reason.message || reason.name;
  return reason === undefined ? undefined : JSON.stringify(reason);
}

/**
 * Runs the outbox exporter on a worker thread and keeps it running: a thread that ends unasked is
 * logged as an error and started again after a bounded backoff, so a process never goes on submitting
 * without an exporter unnoticed.
 */
export function superviseExporter(
  settings: ExporterThreadSettings,
  logger: Logger,
  options: ExporterSupervisorOptions = {},
): ExporterSupervisor {
  const entry = options.entry ?? new URL("./exporter-thread.js", import.meta.url);
  let current: { worker: Worker; ended: Promise<void> } | undefined;
  let markStarted: () => void = () => undefined;
  const firstStart = new Promise<void>((resolve) => (markStarted = resolve));
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let failures = 0;
  let starts = 0;

  const spawn = () => {
    restart = undefined;
    starts++;
    const startedAt = Date.now();
    const worker = new Worker(entry, { workerData: settings });
    let reason: unknown;
    worker.on("error", (error) => {
      reason = error;
    });
    worker.on("message", (message: unknown) => {
      if (startedMessage.safeParse(message).success) markStarted();
      const stopped = stoppedMessage.safeParse(message);
      if (stopped.success)
        logger.info({ exported: stopped.data.exported, refused: stopped.data.refused }, "exporter stopped");
    });
    const ended = new Promise<void>((resolve) => {
      worker.once("exit", (code) => {
        resolve();
        if (current?.worker === worker) current = undefined;
        if (stopping) return;
        if (Date.now() - startedAt >= (options.healthyMs ?? 60_000)) failures = 0;
        const delay = Math.min(options.restartCapMs ?? 30_000, (options.restartMs ?? 1000) * 2 ** failures);
        failures++;
        logger.error(
          { exitCode: code, reason: describe(reason), restartInMs: delay },
          "the exporter of the results of record stopped unexpectedly; it is started again, and until it " +
            "runs the results wait in the outbox in Redis",
        );
        restart = setTimeout(spawn, delay);
      });
    });
    current = { worker, ended };
  };

  spawn();
  return {
    starts: () => starts,
    started: async (ms) =>
      (await within(
        firstStart.then(() => true),
        ms,
      )) === true,
    stop: async () => {
      stopping = true;
      clearTimeout(restart);
      const running = current;
      if (running === undefined) return;
      let grace: NodeJS.Timeout | undefined;
      running.worker.on("message", (message: unknown) => {
        if (stoppedMessage.safeParse(message).success)
          grace = setTimeout(() => void running.worker.terminate(), options.exitGraceMs ?? 5000);
      });
      running.worker.postMessage({ type: "stop" });
      await running.ended;
      clearTimeout(grace);
    },
  };
}
