import type { Redis } from "ioredis";
import { z } from "zod";
import { CallBatcher } from "./call-batcher.js";
import { LuaScript } from "./lua-script.js";
import { ANSWERS, FINISH_INGEST, REGISTER, REQUEUE, STATUSES } from "./scripts.js";
import { RelayKeys } from "./key-names.js";
import {
  attemptPairs,
  KEY_STATUSES,
  resultRecordSchema,
  type AttemptFields,
  type KeyStatus,
  type ResultRecord,
} from "./record.js";
import type { FinalTransition, RequeueResult, ResultsStore, RowDecision, RowRef } from "./ledger.js";

const scripts = {
  register: new LuaScript(REGISTER),
  finishIngest: new LuaScript(FINISH_INGEST),
  answers: new LuaScript(ANSWERS),
  statuses: new LuaScript(STATUSES),
  requeue: new LuaScript(REQUEUE),
};

const stringsSchema = z.array(z.string());
const finalSchema = z.enum(["ok", "already", "already-succeeded", "unknown"]);
const statusSchema = z.enum(KEY_STATUSES);
const retryingSchema = z.enum([...KEY_STATUSES, "unknown"]);
const SIMPLE_DECISIONS = new Set([
  "new",
  "requeue",
  "join",
  "queued",
  "retrying",
  "succeeded",
  "failed",
  "duplicate",
]);

function toDecision(raw: string): RowDecision {
  if (raw.startsWith("conflict:")) return { kind: "conflict", earlierKey: raw.slice("conflict:".length) };
  if (SIMPLE_DECISIONS.has(raw)) return { kind: raw as Exclude<RowDecision["kind"], "conflict"> };
  throw new Error(`results store returned an unknown decision "${raw}"`);
}

/** An attempt's answer as the ANSWERS script takes it. */
interface AnswerInput {
  readonly key: string;
  readonly status: "succeeded" | "failed" | "retrying";
  readonly pairs: readonly string[];
}

/**
 * The results store on Redis: hashes per key, Lua for every transition. The worker's per-invoice calls
 * (the status read before sending, the answer after) are batched per event-loop turn: one round trip
 * and one script run for all the invoices a turn heard about.
 */
export class RedisResultsStore implements ResultsStore {
  readonly keys: RelayKeys;
  readonly #statuses: CallBatcher<string, string>;
  readonly #answers: CallBatcher<AnswerInput, string>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = new RelayKeys(prefix);
    this.#statuses = new CallBatcher(async (keys) =>
      stringsSchema.parse(await scripts.statuses.run(this.redis, [this.keys.base, ...keys])),
    );
    this.#answers = new CallBatcher(async (answers) => {
      const args: (string | number)[] = [this.keys.base, this.now()];
      for (const a of answers) args.push(a.key, a.status, a.pairs.length, ...a.pairs);
      return stringsSchema.parse(await scripts.answers.run(this.redis, args));
    });
  }

  async registerRows(batchId: string, rows: readonly RowRef[]): Promise<RowDecision[]> {
    if (rows.length === 0) return [];
    const args: (string | number)[] = [this.keys.base, batchId, this.now()];
    for (const row of rows) args.push(row.line, row.key, row.externalId);
    const raw = stringsSchema.parse(await scripts.register.run(this.redis, args));
    return raw.map(toDecision);
  }

  async finishIngest(batchId: string): Promise<void> {
    await scripts.finishIngest.run(this.redis, [this.keys.base, batchId, this.now()]);
  }

  async statusOf(key: string): Promise<KeyStatus | undefined> {
    const raw = await this.#statuses.call(key);
    return raw === "" ? undefined : statusSchema.parse(raw);
  }

  async get(key: string): Promise<ResultRecord | undefined> {
    return (await this.getMany([key]))[0];
  }

  async getMany(keys: readonly string[]): Promise<(ResultRecord | undefined)[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hgetall(this.keys.record(key));
    const replies = (await pipeline.exec()) ?? [];
    return keys.map((key, i) => {
      const [error, value] = replies[i] ?? [null, null];
      if (error) throw error;
      const fields = value as Record<string, string> | null;
      if (fields === null || Object.keys(fields).length === 0) return undefined;
      return { ...resultRecordSchema.parse(fields), key };
    });
  }

  async recordSucceeded(key: string, fields: AttemptFields): Promise<FinalTransition> {
    return this.final(key, "succeeded", { ...fields, error: fields.error ?? "" });
  }

  async recordFailed(key: string, fields: AttemptFields): Promise<FinalTransition> {
    return this.final(key, "failed", fields);
  }

  private async final(
    key: string,
    status: "succeeded" | "failed",
    fields: AttemptFields,
  ): Promise<FinalTransition> {
    return finalSchema.parse(await this.#answers.call({ key, status, pairs: attemptPairs(fields) }));
  }

  async recordRetrying(key: string, fields: AttemptFields): Promise<KeyStatus | "unknown"> {
    const answer = { key, status: "retrying" as const, pairs: attemptPairs(fields) };
    return retryingSchema.parse(await this.#answers.call(answer));
  }

  async requeueFailed(key: string): Promise<RequeueResult> {
    const result = await scripts.requeue.run(this.redis, [this.keys.base, key]);
    return result === 1 ? "requeued" : result === 2 ? "superseded" : "not-failed";
  }

  /** Keys requeued by `retry` whose job may not exist yet (see RelayKeys.requeuing). */
  async requeuingKeys(): Promise<string[]> {
    return this.redis.smembers(this.keys.requeuing);
  }

  /** The key's job exists (or it needs none): it is no longer in `requeuingKeys`. */
  async requeued(key: string): Promise<void> {
    await this.redis.srem(this.keys.requeuing, key);
  }

  async failedKeys(): Promise<string[]> {
    return this.redis.smembers(this.keys.failed);
  }

  async counts(): Promise<Record<KeyStatus, number>> {
    const raw = await this.redis.hgetall(this.keys.counts);
    const counts = { queued: 0, retrying: 0, succeeded: 0, failed: 0, superseded: 0 };
    for (const status of KEY_STATUSES) counts[status] = Math.max(0, Number(raw[status] ?? 0));
    return counts;
  }
}
