import { BatchStore, type BatchMeta } from "../ledger/batch-store.js";
import { newBatchId } from "../ledger/batch-id.js";
import { leaseOwner, PASS_RENEW_MS } from "../ledger/pass-lease.js";
import { LEFT_KEPT, Passes, type PassKind, type PassRecord } from "../ledger/passes.js";
import type { LeftFile } from "../names/file-name.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { readSendSeries } from "../ledger/send-series.js";
import { passOutcomes, sendingOver } from "../ledger/pass-figures.js";
import type { Logger } from "../log/logger.js";

/** How long a pass's end waits for Redis to take its record: a run whose Redis is away exits anyway. */
export const PASS_RECORD_WAIT_MS = 1_000;

export interface PassWatchDeps {
  readonly redis: RedisClient;
  readonly prefix: string;
  /** RESULTS_RETENTION: how long a pass's record is kept from its start. */
  readonly retentionMs: number;
  readonly logger: Logger;
}

/**
 * One pass as it is recorded (docs/operations.md, "The night at a glance"): written when it starts
 * (a scan of `start`: once it has taken files) and again when it ends, with its files, its invoices by
 * outcome, what the fleet sent meanwhile and its exit code. What it sent is read at its end from the
 * fleet's answers per second (src/ledger/send-series.ts): the requests refused, the answers of the
 * busiest whole second, the learned rate at the end (src/use-cases/rate-sampler.ts notes it).
 * Redis being away at either write is logged and never changes the pass's outcome. A `run` holds a
 * lease while it runs (src/ledger/pass-lease.ts): killed, it reads as ended with exit 1 to the next
 * process that looks, this one's start included.
 */
export class PassWatch {
  #batches: readonly string[] = [];
  #left: readonly LeftFile[] = [];
  #renewal: NodeJS.Timeout | undefined;

  private constructor(
    private readonly deps: PassWatchDeps,
    readonly id: string,
    readonly kind: PassKind,
    readonly startedAt: number,
    readonly deadline?: number,
  ) {}

  /** A pass starting now (ending by `deadline`, epoch ms, where given); nothing is written until `open`. */
  static starting(deps: PassWatchDeps, kind: PassKind, now = new Date(), deadline?: number): PassWatch {
    return new PassWatch(deps, newBatchId(now), kind, now.getTime(), deadline);
  }

  /** A pass recorded earlier (a scan another process opened), to end it. */
  static of(deps: PassWatchDeps, record: PassRecord): PassWatch {
    const watch = new PassWatch(deps, record.id, record.kind, record.startedAt, record.deadline);
    watch.#batches = record.batches;
    watch.#left = record.left ?? [];
    return watch;
  }

  get batches(): readonly string[] {
    return this.#batches;
  }

  /**
   * Records the pass as running, with the batches known so far. A `run` takes its lease and renews it
   * every PASS_RENEW_MS with its record, which names the batches noted since: killed, it names its files.
   */
  async open(batches: readonly string[] = []): Promise<void> {
    this.#batches = [...batches];
    const { redis, prefix, retentionMs } = this.deps;
    const passes = new Passes(redis, prefix);
    if (redis.status === "ready") await inTime(passes.endLapsed());
    const holder = this.kind === "run" ? leaseOwner() : "";
    const running = () => ({ ...this.#base(), invoices: {} });
    await this.#write(running(), "its start", holder);
    if (holder === "" || this.#renewal !== undefined) return;
    this.#renewal = setInterval(() => {
      passes.write(running(), retentionMs, Date.now(), holder).catch(() => undefined); // the next one tries again
    }, PASS_RENEW_MS);
    this.#renewal.unref();
  }

  /** The batches the pass waits for, as they become known (kept for its end, and a run's lease). */
  note(batches: readonly string[]): void {
    this.#batches = [...batches];
  }

  /** The files the pass saw and left where they are, named (kept with its record). */
  noteLeft(left: readonly LeftFile[]): void {
    this.#left = [...left];
  }

  /** Records the end: the batches as they stand now, the fleet's sending over the pass, the exit code. */
  async end(metas: readonly BatchMeta[], exitCode: number, now = Date.now()): Promise<void> {
    clearInterval(this.#renewal);
    if (metas.length > 0) this.#batches = metas.map((m) => m.id);
    const counted = await this.#asTheyStand(metas);
    const ended = { ...this.#base(), endedAt: now, exitCode, invoices: passOutcomes(counted) };
    const sent = await this.#sending(now);
    await this.#write({ ...ended, ...sent }, "its end");
  }

  #base(): Omit<PassRecord, "invoices"> {
    const base = {
      id: this.id,
      kind: this.kind,
      startedAt: this.startedAt,
      batches: [...this.#batches],
      ...(this.deadline === undefined ? {} : { deadline: this.deadline }),
    };
    if (this.#left.length === 0) return base;
    const leftOut = this.#left.length - LEFT_KEPT;
    return { ...base, left: this.#left.slice(0, LEFT_KEPT), ...(leftOut > 0 ? { leftOut } : {}) };
  }

  /**
   * The batches read again at the end: a pass cut short last read them a round before (a report written
   * from Redis as it ended, answers since); as given when Redis does not answer in time.
   */
  async #asTheyStand(metas: readonly BatchMeta[]): Promise<readonly BatchMeta[]> {
    const { redis, prefix } = this.deps;
    if (metas.length === 0 || redis.status !== "ready") return metas;
    const read = await inTime(new BatchStore(redis, prefix).getMany(metas.map((m) => m.id)));
    if (!read.ok) return metas;
    return read.value.map((m, i) => m ?? metas[i]).filter((m): m is BatchMeta => m !== undefined);
  }

  /** What the fleet sent over the pass, from its series; nothing when Redis does not answer in time. */
  async #sending(now: number): Promise<Pick<PassRecord, "refused" | "busiestSecond" | "learnedRate">> {
    const read = await inTime(readSendSeries(this.deps.redis, this.deps.prefix, this.startedAt, now));
    return read.ok ? sendingOver(read.value) : {};
  }

  async #write(record: PassRecord, what: string, leaseHolder = ""): Promise<void> {
    const { redis, prefix, retentionMs, logger } = this.deps;
    const context = { pass: this.id, kind: this.kind, exitCode: record.exitCode };
    if (redis.status !== "ready") {
      logger.warn({ ...context, redis: redis.status }, `Redis is away: the pass's record misses ${what}`);
      return;
    }
    const written = await inTime(
      new Passes(redis, prefix).write(record, retentionMs, Date.now(), leaseHolder),
    );
    if (!written.ok)
      logger.warn({ ...context, err: written.error }, `could not record ${what} of the pass in Redis`);
  }
}

/** The promise's value, or why there is none: its error, or PASS_RECORD_WAIT_MS passed first. */
async function inTime<T>(
  promise: Promise<T>,
): Promise<{ readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Error }> {
  const settled = promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({
      ok: false as const,
      error: error instanceof Error ? error : new Error(String(error)),
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ ok: false; error: Error }>((resolve) => {
    timer = setTimeout(() => {
      resolve({ ok: false, error: new Error(`Redis did not answer within ${PASS_RECORD_WAIT_MS} ms`) });
    }, PASS_RECORD_WAIT_MS);
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
