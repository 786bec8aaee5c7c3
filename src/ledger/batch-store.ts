import { z } from "zod";
import { nowArgument, type LedgerClock } from "./clock.js";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import { Outbox, type OutboxRow } from "./outbox.js";
import type { RedisClient } from "./redis-client.js";
import { unpackKeys } from "./redis-ledger.js";
import { LedgerReplyError } from "./errors/ledger-reply-error.js";
import { batchMetaSchema, type BatchMeta } from "./batch-meta.js";

export { batchMetaSchema, type BatchMeta };

const writeScript = new LuaScript("batch-write");
type BatchWrite = "open" | "update" | "changed" | "report";
/** Batch records per MULTI (getMany): one uninterrupted block in Redis, bounded as INGEST_CHUNK_ROWS is. */
const BATCHES_PER_READ = 250;

export interface NewBatch {
  readonly id: string;
  readonly file: string;
  readonly format: BatchMeta["format"];
  readonly path: string;
  readonly host: string;
  /** What was claimed (see `size` above); absent only where nothing was measured. */
  readonly size?: number;
  readonly sha256?: string;
  /** The source profile's name (SourceProfile.name) when one matched the file. */
  readonly profile?: string | undefined;
  /** Its snapshot (opaque here), kept so that re-reads use the profile the batch was ingested with. */
  readonly profileJson?: string | undefined;
  /** See BatchMeta's `same_content_as`. */
  readonly sameContentAs?: { readonly batch: string; readonly file: string } | undefined;
}

/**
 * Batch records: what was dropped, where the file is, how far it got, where its report is. Every write
 * of a batch's record is one script run (lua/batch-write.lua) that also writes its `batch` event while
 * the outbox is on.
 */
export class BatchStore {
  readonly names: LedgerNames;
  readonly #outbox: Outbox;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    /** A fixed clock for tests; absent: Redis's own (src/ledger/clock.ts). */
    private readonly clock?: LedgerClock,
  ) {
    this.names = new LedgerNames(prefix);
    this.#outbox = new Outbox(redis, prefix);
  }

  async #write(
    id: string,
    what: BatchWrite,
    fields: Readonly<Record<string, string | number | undefined>>,
  ): Promise<unknown> {
    const pairs: string[] = [];
    for (const [name, value] of Object.entries(fields))
      if (value !== undefined) pairs.push(name, String(value));
    const n = this.names;
    return writeScript.run(
      this.redis,
      [n.batch(id), n.batches, n.completed, n.reopened, n.outboxOn, n.outbox],
      [id, nowArgument(this.clock), what, ...pairs],
    );
  }

  /**
   * Records a new batch; a batch resumed after a crash keeps its record (a record from before claims
   * were measured takes this measure; a measured one keeps its own).
   */
  async open(batch: NewBatch): Promise<BatchMeta> {
    await this.#open(batch);
    return this.require(batch.id);
  }

  /**
   * Records a batch just claimed under an id minted for it: true when the record is new (it then holds
   * what was given, so nothing is read back); false when a record of that id was there already.
   */
  async openNew(batch: NewBatch): Promise<boolean> {
    return (await this.#open(batch)) === 1;
  }

  async #open(batch: NewBatch): Promise<unknown> {
    return this.#write(batch.id, "open", {
      file: batch.file,
      format: batch.format,
      path: batch.path,
      state: "ingesting",
      host: batch.host,
      size: batch.size,
      sha256: batch.sha256,
      profile: batch.profile,
      profile_json: batch.profileJson,
      same_content_as: batch.sameContentAs === undefined ? undefined : JSON.stringify(batch.sameContentAs),
    });
  }

  /**
   * The batch's record, with what the scripts keep outside it: `pending` (keys it still waits for),
   * `completed_at`, and `ingested` as the state of a reported batch that `retry` or a re-drop reopened.
   */
  async get(id: string): Promise<BatchMeta | undefined> {
    return (await this.#read([id]))[0]?.meta;
  }

  /** The records of several batches, as `get` reads each, in the order of `ids`. */
  async getMany(ids: readonly string[]): Promise<(BatchMeta | undefined)[]> {
    const chunks: string[][] = [];
    for (let at = 0; at < ids.length; at += BATCHES_PER_READ)
      chunks.push(ids.slice(at, at + BATCHES_PER_READ));
    const read = await Promise.all(chunks.map((chunk) => this.#read(chunk)));
    return read.flat().map((r) => r?.meta);
  }

  /** The record as `get` reads it and, read with it, whether the batch is complete and not reported. */
  async getForReport(
    id: string,
  ): Promise<{ meta: BatchMeta; complete: boolean; outbox: boolean } | undefined> {
    const outbox = { on: false };
    const [read] = await this.#read([id], outbox);
    return read === undefined ? undefined : { ...read, outbox: outbox.on };
  }

  /**
   * One MULTI for the batches of `ids`: each record as of one instant, in one round trip; with `outbox`,
   * whether the outbox is on (outboxEnabled) is read in it too.
   */
  async #read(
    ids: readonly string[],
    outbox?: { on: boolean },
  ): Promise<({ meta: BatchMeta; complete: boolean } | undefined)[]> {
    const multi = this.redis.multi();
    if (outbox !== undefined) multi.exists(this.names.outboxOn);
    for (const id of ids)
      multi
        .hgetall(this.names.batch(id))
        .hget(this.names.pending, id)
        .zscore(this.names.completed, id)
        .sismember(this.names.reopened, id);
    const replies = (await multi.exec()) ?? [];
    const values = replies.map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    if (outbox !== undefined) outbox.on = values.shift() === 1;
    return ids.map((_, i) => {
      const [fields, pending, completedAt, isReopened] = values.slice(4 * i, 4 * i + 4);
      const stored = z.record(z.string(), z.string()).parse(fields);
      if (Object.keys(stored).length === 0) return undefined;
      const meta = batchMetaSchema.parse(stored);
      const waiting = typeof pending === "string" ? Math.max(0, Number(pending)) : undefined;
      // Waiting for keys again (a retry or re-drop requeued one) until its report is written again; a
      // batch only to be reported again (a key superseded, a late success) is not reopened.
      const reopened = meta.state === "reported" && (isReopened === 1 || (waiting ?? 0) > 0);
      const complete = typeof completedAt === "string";
      return {
        meta: {
          ...meta,
          ...(waiting === undefined ? {} : { pending: waiting }),
          ...(complete ? { completed_at: Number(completedAt) } : {}),
          ...(reopened ? { state: "ingested" as const } : {}),
        },
        complete,
      };
    });
  }

  async require(id: string): Promise<BatchMeta> {
    const meta = await this.get(id);
    if (meta === undefined)
      throw new LedgerReplyError(`batch ${id} is not known to this Redis (QUEUE_PREFIX mismatch?)`);
    return meta;
  }

  async update(id: string, fields: Partial<Record<keyof BatchMeta, string | number>>): Promise<void> {
    await this.#write(id, "update", fields);
  }

  /** Batch ids, oldest first. */
  async list(limit = 10_000): Promise<string[]> {
    return this.redis.zrange(this.names.batches, 0, limit - 1);
  }

  /** Batch ids, newest first. */
  async newest(limit: number): Promise<string[]> {
    return this.redis.zrevrange(this.names.batches, 0, limit - 1);
  }

  /** How many batches the ledger keeps. */
  async count(): Promise<number> {
    return this.redis.zcard(this.names.batches);
  }

  /** The oldest batch kept and when it was created, if any. */
  async oldest(): Promise<{ id: string; createdAt: number } | undefined> {
    const [id, score] = await this.redis.zrange(this.names.batches, 0, 0, "WITHSCORES");
    return id === undefined ? undefined : { id, createdAt: Number(score) };
  }

  /** Batches whose rows are all final and whose report is still to be written, oldest first. */
  async complete(): Promise<string[]> {
    return this.redis.zrange(this.names.completed, 0, -1);
  }

  async isComplete(id: string): Promise<boolean> {
    return (await this.redis.zscore(this.names.completed, id)) !== null;
  }

  /** The idempotency keys the batch has (new, requeued or joined rows), `pageKeys` at a time. */
  async *keysOf(id: string, pageKeys = 1000): AsyncGenerator<string[]> {
    for (let at = 0; ; at += 16 * pageKeys) {
      const page = await this.redis.getrangeBuffer(this.names.batchKeyList(id), at, at + 16 * pageKeys - 1);
      if (page.length > 0) yield unpackKeys(page);
      if (page.length < 16 * pageKeys) return;
    }
  }

  async markReported(
    id: string,
    fields: { report_csv: string; summary_json: string; counts: string; path: string },
    /** A file rejected as a whole keeps the state that says so. */
    state: "reported" | "rejected" = "reported",
  ): Promise<void> {
    await this.#write(id, "report", { ...fields, state });
  }

  /** Its file is taken again, whole, as batch `by` (noted before the new batch exists: see take-again.ts). */
  async markReplaced(id: string, by: string): Promise<void> {
    await this.#write(id, "update", { replaced_by: by });
  }

  /** The file changed after its claim: the batch is never reported, and says why. */
  async markChanged(id: string, problem: string): Promise<void> {
    await this.#write(id, "changed", { state: "changed", file_error: problem });
  }

  /** Whether the outbox is on: a report's rows go to it (`addReportRows`) only then. */
  async outboxEnabled(): Promise<boolean> {
    return this.#outbox.enabled();
  }

  /**
   * Rows of the batch's report as `rows` events, before the batch is marked reported: `report` empty for
   * the first rows of a report, then the generation that call resolved to (Outbox.addRows).
   */
  async addReportRows(id: string, rows: readonly OutboxRow[], report = ""): Promise<string> {
    return this.#outbox.addRows(id, rows, report);
  }

  /** The cross-file decisions (duplicate, conflict:<key>) taken at ingest for these lines. */
  async decisions(id: string, lines: readonly number[]): Promise<(string | null)[]> {
    if (lines.length === 0) return [];
    return this.redis.hmget(this.names.decisions(id), ...lines.map(String));
  }
}
