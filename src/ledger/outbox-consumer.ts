import { z } from "zod";
import { OutboxGroupMissingError } from "./errors/outbox-group-missing-error.js";
import { LedgerNames } from "./names.js";
import { keepRefusedEvent } from "./outbox-backlog.js";
import { dropAcknowledgedEntries } from "./outbox-leftovers.js";
import type { RedisClient } from "./redis-client.js";

/** The consumer group every exporter of a deployment reads the outbox in. */
export const EXPORT_GROUP = "exporter";

/** One outbox entry as read: its stream id and its fields (null: deleted after it was delivered). */
export type OutboxRead = readonly [id: string, fields: string[] | null];

const entries = z.array(z.tuple([z.string(), z.array(z.string()).nullable()]));
const readReply = z.array(z.tuple([z.string(), entries])).nullable();
const claimReply = z.tuple([z.string(), entries]).rest(z.unknown());

/** A reply that says the group (or the stream) is gone, as Redis words it. */
const groupMissing = (error: unknown) => String(error).includes("NOGROUP");

/**
 * The consumer side of the outbox, for one consumer of the exporters' group: read a batch of events, take
 * over what a dead consumer left, acknowledge what was exported. Every read and acknowledgement throws
 * OutboxGroupMissingError when the group is gone; `ensureGroup` creates it again.
 */
export class OutboxConsumer {
  readonly #names: LedgerNames;
  #claimCursor = "0-0";

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** This consumer's name in the group. */
    readonly consumer: string,
  ) {
    this.#names = new LedgerNames(prefix);
  }

  /** The stream read, and the one refused events are kept in: named in logs. */
  get streams(): { readonly outbox: string; readonly refused: string } {
    return { outbox: this.#names.outbox, refused: this.#names.outboxRefused };
  }

  /**
   * Creates the group (and the stream) if missing, reading from the first entry; removes entries an
   * exporter acknowledged and died before deleting (outbox-leftovers.ts). Resolves to how many it removed.
   */
  async ensureGroup(): Promise<number> {
    try {
      await this.redis.xgroup("CREATE", this.#names.outbox, EXPORT_GROUP, "0", "MKSTREAM");
    } catch (error) {
      if (!String(error).includes("BUSYGROUP")) throw error;
    }
    return dropAcknowledgedEntries(this.redis, this.prefix, EXPORT_GROUP);
  }

  /** Up to `count` entries this consumer read and did not acknowledge (a failed write, a restart under its name). */
  async readOwn(count: number): Promise<OutboxRead[]> {
    return this.#read(this.redis.xreadgroup(...this.#group(count), "STREAMS", this.#names.outbox, "0"));
  }

  /** Up to `count` new entries, waiting up to `blockMs` for the first. */
  async readNew(count: number, blockMs: number): Promise<OutboxRead[]> {
    return this.#read(
      this.redis.xreadgroup(
        ...this.#group(count),
        "BLOCK",
        String(blockMs),
        "STREAMS",
        this.#names.outbox,
        ">",
      ),
    );
  }

  /** Takes over up to `count` entries another consumer read and left unacknowledged `idleMs` (its process died). */
  async claimIdle(idleMs: number, count: number): Promise<OutboxRead[]> {
    const reply = await this.#missing(
      this.redis.xautoclaim(
        this.#names.outbox,
        EXPORT_GROUP,
        this.consumer,
        idleMs,
        this.#claimCursor,
        "COUNT",
        String(count),
      ),
    );
    const [next, claimed] = claimReply.parse(reply);
    this.#claimCursor = next;
    return claimed;
  }

  /** Keeps an event the results database refused aside, before it is acknowledged (outbox-backlog.ts). */
  async keepRefused(refused: {
    readonly id: string;
    readonly fields: readonly string[];
    readonly problem: string;
  }): Promise<void> {
    await keepRefusedEvent(this.redis, this.prefix, refused);
  }

  /**
   * Acknowledges and deletes exported entries, both in one MULTI: a consumer killed between the two would
   * leave entries acknowledged, so never read again, and never deleted, which `run` would wait for until
   * its deadline.
   */
  async acknowledge(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const replies = await this.redis
      .multi()
      .xack(this.#names.outbox, EXPORT_GROUP, ...ids)
      .xdel(this.#names.outbox, ...ids)
      .exec();
    for (const [error] of replies ?? [])
      if (error) throw groupMissing(error) ? new OutboxGroupMissingError({ cause: error }) : error;
  }

  #group(count: number) {
    return ["GROUP", EXPORT_GROUP, this.consumer, "COUNT", String(count)] as const;
  }

  async #read(reply: Promise<unknown>): Promise<OutboxRead[]> {
    return readReply.parse(await this.#missing(reply))?.[0]?.[1] ?? [];
  }

  async #missing<T>(reply: Promise<T>): Promise<T> {
    try {
      return await reply;
    } catch (error) {
      throw groupMissing(error) ? new OutboxGroupMissingError({ cause: error }) : error;
    }
  }
}
