import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../log/logger.js";
import { IngestInterruptedError } from "./errors/ingest-interrupted-error.js";

/**
 * How far ahead of the workers ingest may enqueue: at most `jobs` jobs not yet final in the queue
 * (INGEST_WINDOW), so Redis holds the invoices in flight and the finished records, not a whole file.
 */
export interface WindowSettings {
  readonly jobs: number;
  /**
   * Ends a wait for room (SIGTERM, SIGINT, `run`'s deadline, a refused API key): the wait then throws
   * IngestInterruptedError, between two chunks, and the file stays claimed for the next pass.
   */
  readonly until?: AbortSignal | undefined;
  /**
   * Asked at each look while the window is full: true when no worker will take an invoice whatever
   * the wait (the service refused the API key); the wait then ends as for `until`.
   */
  readonly held?: (() => Promise<boolean>) | undefined;
  /** Told once per file when it first waits for room, with the jobs not yet final (`ingest` says so). */
  readonly onWait?: ((wait: WindowWait) => void) | undefined;
}

export interface WindowWait {
  readonly file: string;
  readonly unfinished: number;
  readonly window: number;
}

/** The queue's jobs not yet final (waiting, delayed, active): one Redis call. */
export type UnfinishedJobs = () => Promise<number>;

/**
 * While the window is full, how often the queue is counted again. At the fastest pace measured for one
 * process (about 4,300 invoices/s, docs/benchmarks.md) a tenth of a second frees some 430 jobs, a few
 * percent of the default window: the workers never run dry, and ten counts a second cost Redis nothing.
 */
export const WINDOW_POLL_MS = 100;

/**
 * A full window with no job finished for this long is said aloud (a warning): longer than one request
 * may take by default (REQUEST_TIMEOUT_MS, 30 s), so a slow service is not mistaken for an absent worker.
 */
export const WINDOW_STALL_NOTICE_MS = 30_000;

export interface WindowTiming {
  readonly pollMs: number;
  readonly stallNoticeMs: number;
}

/**
 * One file's share of the window. `take` is called before a chunk is registered and enqueued, `done`
 * once it is (or failed): the queue then never holds more than the window because of this file. The
 * count read from Redis may or may not include chunks still under way, so those are counted on top
 * (never under). Several files ingested at once each fill the room they saw: the queue holds at most
 * one window per file being ingested at that moment.
 */
export class IngestWindow {
  /** Jobs that may still be added before the queue is counted again. */
  #room = 0;
  /** Rows of chunks taken and not yet done: each may add one job. */
  #underWay = 0;
  #told = false;

  constructor(
    private readonly settings: WindowSettings,
    private readonly unfinished: UnfinishedJobs,
    private readonly context: { readonly file: string; readonly logger: Logger },
    private readonly timing: WindowTiming = {
      pollMs: WINDOW_POLL_MS,
      stallNoticeMs: WINDOW_STALL_NOTICE_MS,
    },
  ) {}

  /**
   * Waits until `rows` more jobs keep the queue within the window, then counts them as under way.
   * Throws IngestInterruptedError once `until` is aborted or `held` says so while it waits.
   */
  async take(rows: number): Promise<void> {
    // A chunk larger than the window goes once the queue is that empty.
    const wanted = Math.min(rows, this.settings.jobs);
    let last: { unfinished: number; since: number } | undefined;
    let noticed = false;
    while (this.#room < wanted) {
      const until = this.settings.until;
      if (until?.aborted === true) throw new IngestInterruptedError(this.context.file);
      const unfinished = await this.unfinished();
      this.#room = this.settings.jobs - unfinished - this.#underWay;
      if (this.#room >= wanted) break;
      if ((await this.settings.held?.()) === true) throw new IngestInterruptedError(this.context.file);
      const now = Date.now();
      if (!this.#told) {
        this.#told = true;
        this.settings.onWait?.({ file: this.context.file, unfinished, window: this.settings.jobs });
        this.context.logger.info(
          { file: this.context.file, unfinished, window: this.settings.jobs },
          "the queue holds as many invoices not yet final as INGEST_WINDOW allows; ingest goes on as workers finish them",
        );
      }
      if (last === undefined || unfinished < last.unfinished) last = { unfinished, since: now };
      else if (!noticed && now - last.since >= this.timing.stallNoticeMs) {
        noticed = true;
        this.context.logger.warn(
          { file: this.context.file, unfinished, window: this.settings.jobs, waitedMs: now - last.since },
          "ingest waits for room in the queue and no invoice has finished meanwhile: is a worker running " +
            "(`invoice-relay worker`, `start` or `run`, same Redis and QUEUE_PREFIX)? `invoice-relay status` " +
            "shows a cool-down or a refused API key; stopping here is safe, the next pass resumes the file",
        );
      }
      await sleep(this.timing.pollMs, undefined, until === undefined ? {} : { signal: until }).catch(
        () => undefined, // aborted: the loop throws above
      );
    }
    this.#room -= wanted;
    this.#underWay += wanted;
  }

  /**
   * A chunk taken with `take(rows)` is over. `added`: the jobs it may have added (rows its decisions
   * enqueued); the rest of its share goes back to the room. Undefined when it failed: nothing goes back.
   */
  done(rows: number, added?: number): void {
    const taken = Math.min(rows, this.settings.jobs);
    this.#underWay -= taken;
    if (added !== undefined) this.#room += Math.max(0, taken - added);
  }
}
