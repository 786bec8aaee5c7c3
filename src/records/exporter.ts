import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl, urlCredentials } from "../config/url-credentials.js";
import { LedgerNames } from "../ledger/names.js";
import { keepRefusedEvent } from "../ledger/outbox-backlog.js";
import { dropAcknowledgedEntries } from "../ledger/outbox-leftovers.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { maskSecrets, type Logger } from "../log/logger.js";
import { exportEvents, type IdentifiedEvent } from "./export-batch.js";
import { readEntry, type OutboxEntry } from "./outbox-events.js";
import type { Pool } from "./pool.js";

/** The consumer group every exporter of a deployment reads the outbox in. */
export const EXPORT_GROUP = "exporter";

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

const entries = z.array(z.tuple([z.string(), z.array(z.string()).nullable()]));
const readReply = z.array(z.tuple([z.string(), entries])).nullable();
const claimReply = z.tuple([z.string(), entries]).rest(z.unknown());

/** SQLSTATE classes of data the database refuses (22 data exception, 23 integrity): retrying cannot help. */
const refusedData = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && /^2[23]/.test(String(error.code));

/**
 * Drains the ledger's outbox into PostgreSQL: reads entries in a consumer group, writes each read in one
 * transaction of idempotent upserts, then acknowledges and deletes them. What this process read and did
 * not acknowledge (a failed write, a restart under the same name) is read again first; what a dead
 * process left is taken over once idle `claimIdleMs`. While PostgreSQL refuses, it retries with backoff
 * and the outbox grows; nothing is acknowledged that is not committed.
 */
export class OutboxExporter {
  readonly #key: string;
  readonly #consumer: string;
  readonly #batchSize: number;
  #claimCursor = "0-0";
  #stopping = false;
  #stopWait: AbortController = new AbortController();
  #loop: Promise<void> | undefined;
  #lastWarning = Number.NEGATIVE_INFINITY;
  #failures = 0;
  /** Events written to PostgreSQL, and entries kept aside in `outbox-refused` (unreadable or refused). */
  readonly stats = { exported: 0, refused: 0 };

  constructor(private readonly options: ExporterOptions) {
    this.#key = new LedgerNames(options.prefix).outbox;
    this.#consumer = options.consumer ?? `${hostname()}-${process.pid}`;
    this.#batchSize = options.batchSize ?? 500;
  }

  /**
   * Creates the consumer group (and the stream) if missing, reading from the first entry; removes entries
   * an exporter acknowledged and died before deleting (src/ledger/outbox-leftovers.ts).
   */
  async ensureGroup(): Promise<void> {
    try {
      await this.options.redis.xgroup("CREATE", this.#key, EXPORT_GROUP, "0", "MKSTREAM");
    } catch (error) {
      if (!String(error).includes("BUSYGROUP")) throw error;
    }
    const dropped = await dropAcknowledgedEntries(this.options.redis, this.options.prefix, EXPORT_GROUP);
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
        if (String(error).includes("NOGROUP")) {
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
    const redis = this.options.redis;
    const count = String(this.#batchSize);
    let batch = await this.#readGroup("0");
    if (batch.length === 0) {
      const [next, claimed] = claimReply.parse(
        await redis.xautoclaim(
          this.#key,
          EXPORT_GROUP,
          this.#consumer,
          this.options.claimIdleMs ?? 30_000,
          this.#claimCursor,
          "COUNT",
          count,
        ),
      );
      this.#claimCursor = next;
      batch = claimed;
    }
    if (batch.length === 0 && !this.#stopping) batch = await this.#readGroup(">");
    if (batch.length === 0) return 0;
    const fieldsOf = new Map(batch.map(([id, fields]) => [id, fields ?? []]));
    const refused = await this.#write(
      batch.map(([id, fields]) => (fields === null ? undefined : readEntry(id, fields))),
    );
    // Kept aside before they leave the outbox: an event PostgreSQL refuses is never lost.
    for (const { id, problem } of refused)
      await keepRefusedEvent(redis, this.options.prefix, { id, problem, fields: fieldsOf.get(id) ?? [] });
    const ids = batch.map(([id]) => id);
    // Both in one MULTI: an exporter killed between the two would leave entries acknowledged, so never
    // read again, and never deleted, which `run` would wait for until its deadline.
    const replies = await redis
      .multi()
      .xack(this.#key, EXPORT_GROUP, ...ids)
      .xdel(this.#key, ...ids)
      .exec();
    for (const [error] of replies ?? []) if (error) throw error;
    return ids.length;
  }

  /**
   * Up to batchSize entries of the group: "0" re-reads this consumer's unacknowledged ones at once; ">"
   * reads new ones, waiting up to blockMs.
   */
  async #readGroup(from: "0" | ">"): Promise<z.infer<typeof entries>> {
    const group = ["GROUP", EXPORT_GROUP, this.#consumer, "COUNT", String(this.#batchSize)] as const;
    const reply =
      from === "0"
        ? await this.options.redis.xreadgroup(...group, "STREAMS", this.#key, from)
        : await this.options.redis.xreadgroup(
            ...group,
            "BLOCK",
            String(this.options.blockMs ?? 1000),
            "STREAMS",
            this.#key,
            from,
          );
    return readReply.parse(reply)?.[0]?.[1] ?? [];
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
      if ("event" in entry) events.push(entry);
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
      { entry: id, stream: this.#key, keptIn: new LedgerNames(this.options.prefix).outboxRefused, problem },
      "an outbox event the results database refuses was kept aside in the outbox-refused stream (docs/operations.md)",
    );
    return { id, problem };
  }
}
