import { parse as parseUuid } from "uuid";
import { z } from "zod";
import { LuaScript } from "./lua-script.js";
import { LedgerNames } from "./names.js";
import type { RestoredRecord } from "./past-record.js";
import type { RedisClient } from "./redis-client.js";

const restore = new LuaScript("restore");

/**
 * The ledger's verb for deduplication beyond retention (ingest, before a chunk is registered): writing
 * back the records of keys whose final answer the retention forgot.
 */
export interface RecordRestoring {
  /**
   * Writes back, for rows of a batch being ingested, the records of keys that succeeded or failed
   * before retention removed them, only where a key has none; the batch keeps them (restore.lua), so
   * retention removes them with it. Returns how many were written.
   */
  restoreRecords(batchId: string, records: readonly RestoredRecord[]): Promise<number>;
}

/** RecordRestoring on Redis: one script run per call, every key declared. */
export class RedisRecordRestorer implements RecordRestoring {
  readonly #names: LedgerNames;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.#names = new LedgerNames(prefix);
  }

  async restoreRecords(batchId: string, records: readonly RestoredRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const names = this.#names;
    const packed = Buffer.concat(records.map((r) => parseUuid(r.key)));
    const args: (string | number | Buffer)[] = [batchId, packed];
    const text = (value: string | number | undefined) => (value === undefined ? "" : String(value));
    for (const r of records)
      args.push(
        r.key,
        r.externalId,
        r.status,
        r.line,
        r.attempts,
        text(r.firstAttemptAt),
        text(r.lastAttemptAt),
        text(r.httpStatus),
        text(r.correlationId),
        text(r.rulesetVersion),
        text(r.error),
        text(r.responseBody),
      );
    const written = await restore.run(
      this.redis,
      [
        names.counts,
        names.externalIds,
        names.batchKeyList(batchId),
        ...records.map((r) => names.record(r.key)),
      ],
      args,
    );
    return z.number().int().parse(written);
  }
}
