import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl, urlCredentials } from "../config/url-credentials.js";
import { OutboxGroupMissingError } from "../ledger/errors/outbox-group-missing-error.js";
import { OutboxConsumer } from "../ledger/outbox-consumer.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { maskSecrets, type Logger } from "../log/logger.js";
import { exportEvents, type IdentifiedEvent } from "./export-batch.js";
import { readEntry, type OutboxEntry } from "./outbox-events.js";
import type { Pool } from "./pool.js";

export { EXPORT_GROUP } from "../ledger/outbox-consumer.js";

export interface ExporterOptions {
  /** A connection of its own: the exporter blocks on it waiting for events. */
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly pool: Pool;
  /** RESULTS_DATABASE_URL: named in warnings without its password. */
  readonly url: string;
  readonly logger: Logger;
  /** This process' name in the group (default host-pid). */
  readonly consumer?: string;
  /** Entries per read, written in one transaction. */
  readonly batchSize?: number;
  readonly blockMs?: number;
  /**
   * After a read of fewer than `batchSize` entries, wait this long before the next (default 50 ms): while
   * submission runs, each transaction then carries hundreds of events instead of a few; at a pass's end
   * the last events wait no longer than this.
   */
  readonly lingerMs?: number;
  /** Entries another exporter read and has not acknowledged this long are taken over (its process died). */
  readonly claimIdleMs?: number;
  readonly backoffCapMs?: number;
  /** The warning that PostgreSQL refuses is logged at most this often. */
  readonly warnEveryMs?: number;
}

/** SQLSTATE classes of data the database refuses (22 data exception, 23 integrity): retrying cannot help. */
const refusedData = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && /^2[23]/.test(String(error.code));

/**
 * Drains the ledger's outbox into PostgreSQL: reads entries in a consumer group (src/ledger/outbox-consumer.ts),
 * writes each read in one transaction of idempotent upserts, then acknowledges and deletes them. What this process read and did
 * not acknowledge (a failed write, a restart under the same name) is read again first; what a dead
 * process left is taken over once idle `claimIdleMs`. While PostgreSQL refuses, it retries with backoff
 * and the outbox grows; nothing is acknowledged that is not committed.
 */
export class OutboxExporter {
  readonly #outbox: OutboxConsumer;
  readonly #batchSize: number;
  #stopping = false;
  #stopWait: AbortController = new AbortController();
  #loop: Promise<void> | undefined;
  #lastWarning = Number.NEGATIVE_INFINITY;
  #failures = 0;
  /** Events written to PostgreSQL, and entries kept aside in `outbox-refused` (unreadable or refused). */
  readonly stats = { exported: 0, refused: 0 };

  constructor(private readonly options: ExporterOptions) {
    this.#outbox = new OutboxConsumer(
      options.redis,
      options.prefix,
      options.consumer ?? `${hostname()}-${process.pid}`,
    );
    this.#batchSize = options.batchSize ?? 500;
  }

  /**
   * Creates the consumer group (and the stream) if missing, reading from the first entry; removes entries
   * an exporter acknowledged and died before deleting (src/ledger/outbox-leftovers.ts).
   */
  async ensureGroup(): Promise<void> {
    const dropped = await this.#outbox.ensureGroup();
    if (dropped > 0)
      this.options.logger.info({ dropped }, "removed outbox entries already exported and acknowledged");
  }

  /** Starts draining in the background until `stop`. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops after the read in hand is written and acknowledged (or given up on while PostgreSQL refuses). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopWait.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    await this.ensureGroup().catch(() => undefined);
    while (!this.#stopping) {
      try {
        const handled = await this.exportOnce();
        if (handled > 0 && handled < this.#batchSize)
          await sleep(this.options.lingerMs ?? 50, undefined, { signal: this.#stopWait.signal }).catch(
            () => undefined,
          );
        if (this.#failures > 0)
          this.options.logger.info(
            { database: safeUrl(this.options.url, DATABASE_URL_SETTING) },
            "PostgreSQL answers again: exporting the outbox",
          );
        this.#failures = 0;
      } catch (error) {
        if (error instanceof OutboxGroupMissingError) {
          await this.ensureGroup().catch(() => undefined);
          continue;
        }
        this.#failures++;
        this.#warn(error);
        const delay = Math.min(this.options.backoffCapMs ?? 30_000, 250 * 2 ** Math.min(this.#failures, 10));
        await sleep(delay * (0.5 + Math.random() / 2), undefined, { signal: this.#stopWait.signal }).catch(
          () => undefined,
        );
      }
    }
  }

  #warn(error: unknown): void {
    const now = Date.now();
    if (now - this.#lastWarning < (this.options.warnEveryMs ?? 60_000)) return;
    this.#lastWarning = now;
    const text = error instanceof Error ? error.message || error.name : String(error);
    const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
    this.options.logger.warn(
      {
        database: safeUrl(this.options.url, DATABASE_URL_SETTING),
        reason: maskSecrets(code === "" ? text : `${code}: ${text}`, urlCredentials(this.options.url)),
      },
      `PostgreSQL at ${safeUrl(this.options.url, DATABASE_URL_SETTING)} does not take the results: submission goes on, ` +
        "the outbox in Redis keeps them and they are exported when it answers again",
    );
  }

  /**
   * One round: this consumer's unacknowledged entries first, else entries a dead consumer left, else new
   * ones (waiting up to blockMs). Resolves to the entries handled; throws when PostgreSQL refused.
   */
  async exportOnce(): Promise<number> {
    let batch = await this.#outbox.readOwn(this.#batchSize);
    if (batch.length === 0)
      batch = await this.#outbox.claimIdle(this.options.claimIdleMs ?? 30_000, this.#batchSize);
    if (batch.length === 0 && !this.#stopping)
      batch = await this.#outbox.readNew(this.#batchSize, this.options.blockMs ?? 1000);
    if (batch.length === 0) return 0;
    const fieldsOf = new Map(batch.map(([id, fields]) => [id, fields ?? []]));
    const refused = await this.#write(
      batch.map(([id, fields]) => (fields === null ? undefined : readEntry(id, fields))),
    );
    // Kept aside before they leave the outbox: an event PostgreSQL refuses is never lost.
    for (const { id, problem } of refused)
      await this.#outbox.keepRefused({ id, problem, fields: fieldsOf.get(id) ?? [] });
    const ids = batch.map(([id]) => id);
    await this.#outbox.acknowledge(ids);
    return ids.length;
  }

  /**
   * Writes the readable events; an entry deleted meanwhile (undefined) was exported already. Resolves to
   * the entries the database refused as data (or that could not be read), to be kept aside.
   */
  async #write(read: readonly (OutboxEntry | undefined)[]): Promise<{ id: string; problem: string }[]> {
    const refused: { id: string; problem: string }[] = [];
    const events: IdentifiedEvent[] = [];
    for (const entry of read) {
      if (entry === undefined) continue;
      if ("events" in entry) for (const event of entry.events) events.push({ id: entry.id, event });
      else refused.push(this.#refuse(entry.id, entry.problem));
    }
    if (events.length === 0) return refused;
    try {
      await this.#transaction(events);
    } catch (error) {
      if (!refusedData(error)) throw error;
      // One event the database refuses must not hold up the others: write them one by one.
      for (const event of events) {
        try {
          await this.#transaction([event]);
        } catch (single) {
          if (!refusedData(single)) throw single;
          // An entry is kept aside whole; writing its other event again later changes nothing.
          if (!refused.some((r) => r.id === event.id))
            refused.push(this.#refuse(event.id, single instanceof Error ? single.message : String(single)));
        }
      }
    }
    return refused;
  }

  async #transaction(events: readonly IdentifiedEvent[]): Promise<void> {
    const client = await this.options.pool.connect();
    // A server that goes away between two statements of the transaction makes a checked-out client emit
    // "error" (the pool listens only to idle ones): unheard, it would end the process. The next statement
    // fails with it, and the transaction with that.
    const ignore = () => undefined;
    client.on("error", ignore);
    try {
      await exportEvents(client, events);
      client.removeListener("error", ignore);
      client.release();
      this.stats.exported += events.length;
    } catch (error) {
      client.removeListener("error", ignore);
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  #refuse(id: string, problem: string): { id: string; problem: string } {
    this.stats.refused++;
    this.options.logger.error(
      { entry: id, stream: this.#outbox.streams.outbox, keptIn: this.#outbox.streams.refused, problem },
      'an outbox event the results database refuses was kept aside in the outbox-refused stream (docs/results-of-record.md, "Events PostgreSQL refuses")',
    );
    return { id, problem };
  }
}
