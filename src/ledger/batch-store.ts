import type { Redis } from "ioredis";
import { z } from "zod";
import { RelayKeys } from "./key-names.js";

/** `changed`: the file changed after its claim; kept in processing/, never reported (see FileChangedError). */
const BATCH_STATES = ["ingesting", "ingested", "rejected", "reported", "changed"] as const;

const optionalInt = z.coerce.number().int().optional();

/** A batch (one drop of one file) as kept in its Redis hash. */
export const batchMetaSchema = z.object({
  id: z.string(),
  file: z.string(),
  format: z.enum(["csv", "json", "ndjson"]),
  /** Where the file is now (processing/, archive/ or rejected/). */
  path: z.string(),
  state: z.enum(BATCH_STATES),
  host: z.string().optional(),
  created_at: z.coerce.number().int(),
  ingested_at: optionalInt,
  completed_at: optionalInt,
  reported_at: optionalInt,
  rows: optionalInt,
  valid_rows: optionalInt,
  pending: optionalInt,
  /** Bytes claimed and their sha256: every reader of the batch reads exactly these bytes. */
  size: optionalInt,
  sha256: z.string().optional(),
  file_error: z.string().optional(),
  report_csv: z.string().optional(),
  summary_json: z.string().optional(),
  /** JSON of the status counts written in the summary. */
  counts: z.string().optional(),
});

export type BatchMeta = z.infer<typeof batchMetaSchema>;

export interface NewBatch {
  readonly id: string;
  readonly file: string;
  readonly format: BatchMeta["format"];
  readonly path: string;
  readonly host: string;
  /** What was claimed (see `size` above); absent only where nothing was measured. */
  readonly size?: number;
  readonly sha256?: string;
}

/** Batch records: what was dropped, where the file is, how far it got, where its report is. */
export class BatchStore {
  readonly keys: RelayKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = new RelayKeys(prefix);
  }

  /** Records a new batch; a batch resumed after a crash keeps its record. */
  async open(batch: NewBatch): Promise<BatchMeta> {
    const key = this.keys.batch(batch.id);
    const created = await this.redis.hsetnx(key, "id", batch.id);
    if (created === 1) {
      const now = this.now();
      await this.redis
        .multi()
        .hset(key, {
          file: batch.file,
          format: batch.format,
          path: batch.path,
          state: "ingesting",
          host: batch.host,
          ...(batch.size === undefined ? {} : { size: batch.size }),
          ...(batch.sha256 === undefined ? {} : { sha256: batch.sha256 }),
          created_at: now,
        })
        .zadd(this.keys.batches, now, batch.id)
        .exec();
    } else {
      // A record from before claims were measured takes this measure; a measured one keeps its own.
      const multi = this.redis.multi().hset(key, "path", batch.path);
      if (batch.size !== undefined && batch.sha256 !== undefined)
        multi.hsetnx(key, "size", batch.size).hsetnx(key, "sha256", batch.sha256);
      await multi.exec();
    }
    return this.require(batch.id);
  }

  async get(id: string): Promise<BatchMeta | undefined> {
    const fields = await this.redis.hgetall(this.keys.batch(id));
    if (Object.keys(fields).length === 0) return undefined;
    return batchMetaSchema.parse(fields);
  }

  async require(id: string): Promise<BatchMeta> {
    const meta = await this.get(id);
    if (meta === undefined)
      throw new Error(`batch ${id} is not known to this Redis (QUEUE_PREFIX mismatch?)`);
    return meta;
  }

  async update(id: string, fields: Partial<Record<keyof BatchMeta, string | number>>): Promise<void> {
    await this.redis.hset(this.keys.batch(id), fields);
  }

  /** Batch ids, oldest first. */
  async list(limit = 10_000): Promise<string[]> {
    return this.redis.zrange(this.keys.batches, 0, limit - 1);
  }

  /** Batches whose rows are all final and whose report is still to be written. */
  async complete(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.complete)).sort();
  }

  async isComplete(id: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.complete, id)) === 1;
  }

  async markReported(
    id: string,
    fields: { report_csv: string; summary_json: string; counts: string; path: string },
    /** A file rejected as a whole keeps the state that says so. */
    state: "reported" | "rejected" = "reported",
  ): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.batch(id), { ...fields, state, reported_at: this.now() })
      .srem(this.keys.complete, id)
      .exec();
  }

  /** The file changed after its claim: the batch is never reported, and says why. */
  async markChanged(id: string, problem: string): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.batch(id), { state: "changed", file_error: problem })
      .srem(this.keys.complete, id)
      .exec();
  }

  /** The cross-file decisions (duplicate, conflict:<key>) taken at ingest for these lines. */
  async decisions(id: string, lines: readonly number[]): Promise<(string | null)[]> {
    if (lines.length === 0) return [];
    return this.redis.hmget(this.keys.decisions(id), ...lines.map(String));
  }
}
