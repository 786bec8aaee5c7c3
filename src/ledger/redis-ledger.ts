import { parse as parseUuid, stringify as uuidString } from "uuid";
import { z } from "zod";
import { CallBatcher } from "./call-batcher.js";
import { attemptCounts, SERIES_HOUR_MS, type CountGroup } from "./fleet-counts.js";
import { nowArgument, type LedgerClock } from "./clock.js";
import type { Ledger } from "./ledger.js";
import { LedgerNames } from "./names.js";
import { LuaScript } from "./lua-script.js";
import { Outbox } from "./outbox.js";
import {
  attemptJson,
  attemptPairs,
  decodeRecord,
  type AttemptFacts,
  type AttemptFields,
  type ResultRecord,
} from "./record.js";
import { scanKeys, type RedisClient } from "./redis-client.js";
import {
  KEY_STATUSES,
  type AnswerWritten,
  type KeyStatus,
  type RequeueResult,
  type RowDecision,
  type RowRef,
} from "./statuses.js";
import { ExternalIdIndexBusyError } from "./errors/external-id-index-busy-error.js";
import { LedgerReplyError } from "./errors/ledger-reply-error.js";

const scripts = {
  register: new LuaScript("register"),
  finishIngest: new LuaScript("finish-ingest"),
  answers: new LuaScript("answers"),
  statuses: new LuaScript("statuses"),
  requeue: new LuaScript("requeue"),
  refusedAttempt: new LuaScript("refused-attempt"),
};

const stringsSchema = z.array(z.string());
const answerSchema = z.enum(["ok", "already", "already-succeeded", "unknown"]);
const statusSchema = z.enum(KEY_STATUSES);
const retryingSchema = z.enum([...KEY_STATUSES, "unknown"]);
const requeueSchema = z.enum(["requeued", "superseded", "not-failed", "stale"]);
const SIMPLE_DECISIONS: ReadonlySet<string> = new Set([
  "new",
  "requeue",
  "join",
  "duplicate",
  ...KEY_STATUSES,
]);
/** Re-reads of the external-id index before a caller gives up (each needs a concurrent change). */
const STALE_ROUNDS = 20;

function toDecision(raw: string): RowDecision {
  if (raw.startsWith("conflict:")) return { kind: "conflict", earlierKey: raw.slice("conflict:".length) };
  if (SIMPLE_DECISIONS.has(raw)) return { kind: raw as Exclude<RowDecision["kind"], "conflict"> };
  throw new LedgerReplyError(`the ledger returned an unknown decision "${raw}"`);
}

/** An attempt's answer as answers.lua takes it. */
interface AnswerInput {
  readonly key: string;
  readonly status: "succeeded" | "failed" | "retrying";
  readonly pairs: readonly string[];
  readonly attempt: AttemptFacts | undefined;
}

/**
 * The ledger on Redis: one string per key, Lua for every transition (src/ledger/lua). The worker's
 * per-invoice calls (the status read before sending, the answer after) are batched per event-loop turn:
 * one round trip and one script run for all the invoices a turn heard about.
 */
export class RedisLedger implements Ledger {
  readonly names: LedgerNames;
  readonly #statuses: CallBatcher<string, string>;
  readonly #answers: CallBatcher<AnswerInput, string>;
  readonly #outbox: Outbox;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    /** A fixed clock for tests; absent: Redis's own (src/ledger/clock.ts). */
    private readonly clock?: LedgerClock,
    /** How long the answers per second are kept after their hour (RESULTS_RETENTION). */
    private readonly seriesRetentionMs = 0,
  ) {
    this.names = new LedgerNames(prefix);
    this.#outbox = new Outbox(redis, prefix);
    this.#statuses = new CallBatcher(async (keys) =>
      stringsSchema.parse(
        await scripts.statuses.run(
          this.redis,
          keys.map((k) => this.names.record(k)),
          [],
        ),
      ),
    );
    this.#answers = new CallBatcher(async (answers) => this.#writeAnswers(answers));
  }

  /** One run of answers.lua: the answers, and the counts of the requests they answer. */
  async #writeAnswers(answers: readonly AnswerInput[]): Promise<string[]> {
    const counted = this.#countsOf(answers.map((a) => a.attempt));
    const args: (string | number)[] = [nowArgument(this.clock), counted.length, ...this.#countArgs(counted)];
    for (const a of answers) args.push(a.key, a.status, a.pairs.length, ...a.pairs);
    return stringsSchema.parse(
      await scripts.answers.run(
        this.redis,
        [
          this.names.counts,
          this.names.failed,
          this.names.pending,
          this.names.ingesting,
          this.names.completed,
          this.names.outboxOn,
          this.names.outbox,
          ...this.#countNames(counted),
          ...answers.map((a) => this.names.record(a.key)),
        ],
        args,
      ),
    );
  }

  /** The fleet's counts of these requests (src/ledger/fleet-counts.ts): the totals first, always. */
  #countsOf(attempts: readonly (AttemptFacts | undefined)[]): CountGroup[] {
    return attemptCounts(
      attempts.flatMap((a) =>
        a?.counted === undefined ? [] : [{ ...a.counted, answeredAt: a.startedAt + a.durationMs }],
      ),
    );
  }

  /** The count hashes' names, as includes/counts.lua takes them. */
  #countNames(groups: readonly CountGroup[]): string[] {
    return groups.map((g) => (g.hour === undefined ? this.names.fleetTotals : this.names.sendSeries(g.hour)));
  }

  /** The counts as includes/counts.lua takes them: per hash, when it expires, then its pairs. */
  #countArgs(groups: readonly CountGroup[]): (string | number)[] {
    const args: (string | number)[] = [];
    for (const group of groups) {
      const expireAt = group.hour === undefined ? 0 : group.hour + SERIES_HOUR_MS + this.seriesRetentionMs;
      args.push(expireAt, group.pairs.length);
      for (const [field, n] of group.pairs) args.push(field, n);
    }
    return args;
  }

  async registerRows(batchId: string, rows: readonly RowRef[]): Promise<RowDecision[]> {
    if (rows.length === 0) return [];
    const packed = Buffer.concat(rows.map((row) => parseUuid(row.key)));
    const args: (string | number | Buffer)[] = [batchId, nowArgument(this.clock), packed, rows.length];
    for (const row of rows) args.push(row.line, row.key, row.externalId);
    const names = [
      ...this.#movingNames(),
      this.names.batch(batchId),
      this.names.decisions(batchId),
      this.names.batchKeyList(batchId),
      this.names.reopened,
      this.names.outboxOn,
      this.names.outbox,
      ...rows.map((row) => this.names.record(row.key)),
    ];
    // Optimistic: most rows' external_ids are new. When the index names keys the call did not declare,
    // the script writes nothing and says which; the next call declares them too.
    const lives: string[] = [];
    for (let round = 0; round < STALE_ROUNDS; round++) {
      const raw = stringsSchema.parse(
        await scripts.register.run(
          this.redis,
          [...names, ...lives.map((k) => this.names.record(k))],
          [...args, ...lives],
        ),
      );
      if (raw[0] !== "stale") return raw.map(toDecision);
      for (const live of raw.slice(1)) if (!lives.includes(live)) lives.push(live);
    }
    throw new ExternalIdIndexBusyError(
      `registering batch ${batchId}: the external-id index kept changing; run again`,
    );
  }

  async finishIngest(batchId: string): Promise<void> {
    await scripts.finishIngest.run(
      this.redis,
      [this.names.pending, this.names.ingesting, this.names.completed, this.names.batch(batchId)],
      [batchId, nowArgument(this.clock)],
    );
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
    const stored = await this.redis.mget(...keys.map((k) => this.names.record(k)));
    return keys.map((key, i) => {
      const value = stored[i];
      return value === null || value === undefined ? undefined : decodeRecord(key, value);
    });
  }

  /**
   * Every record of this prefix, a page at a time: SCAN (never KEYS, which blocks Redis) and one MGET
   * per page, so memory stays constant however many keys there are. SCAN may return a key twice if
   * Redis resizes its table meanwhile; deduplicating would cost memory per key, so a rare repeated
   * record is accepted. A value that does not read as a record is passed to `onMalformed`, then skipped.
   */
  async *scanRecords(
    options: { pageSize?: number; onMalformed?: (key: string, problem: string) => void } = {},
  ): AsyncGenerator<ResultRecord> {
    const start = this.names.recordStart;
    for await (const names of scanKeys(this.redis, `${escapeGlob(start)}*`, options.pageSize)) {
      const stored = await this.redis.mget(...names);
      for (const [i, name] of names.entries()) {
        const key = name.slice(start.length);
        const value = stored[i];
        if (value === null || value === undefined) continue; // removed between SCAN and MGET
        try {
          yield decodeRecord(key, value);
        } catch (error) {
          options.onMalformed?.(key, error instanceof Error ? error.message : String(error));
        }
      }
    }
  }

  async recordSucceeded(key: string, fields: AttemptFields): Promise<AnswerWritten> {
    return this.final(key, "succeeded", fields);
  }

  async recordFailed(key: string, fields: AttemptFields): Promise<AnswerWritten> {
    return this.final(key, "failed", fields);
  }

  private async final(
    key: string,
    status: "succeeded" | "failed",
    fields: AttemptFields,
  ): Promise<AnswerWritten> {
    return answerSchema.parse(
      await this.#answers.call({ key, status, pairs: attemptPairs(fields), attempt: fields.attempt }),
    );
  }

  async recordRetrying(key: string, fields: AttemptFields): Promise<KeyStatus | "unknown"> {
    const answer = { key, status: "retrying" as const, pairs: attemptPairs(fields), attempt: fields.attempt };
    return retryingSchema.parse(await this.#answers.call(answer));
  }

  /** An attempt answered with a refused API key: its counts, and its `attempt` event while the outbox is on. */
  async recordRefusedAttempt(key: string, attempt: AttemptFacts): Promise<void> {
    const counted = this.#countsOf([attempt]);
    await scripts.refusedAttempt.run(
      this.redis,
      [this.names.outboxOn, this.names.outbox, this.names.record(key), ...this.#countNames(counted)],
      [key, attemptJson(attempt), counted.length, ...this.#countArgs(counted)],
    );
  }

  /**
   * Turns the outbox on for every process sharing this prefix: from now on each script writes its
   * events (docs/ledger.md, "Outbox"). Set by processes started with a results database.
   */
  async enableOutbox(): Promise<void> {
    await this.#outbox.enable();
  }

  async outboxEnabled(): Promise<boolean> {
    return this.#outbox.enabled();
  }

  async requeueFailed(key: string): Promise<RequeueResult> {
    for (let round = 0; round < STALE_ROUNDS; round++) {
      const record = await this.get(key);
      if (record?.status !== "failed") return "not-failed";
      const live = (await this.redis.hget(this.names.externalIds, record.external_id)) ?? "";
      const result = requeueSchema.parse(
        await scripts.requeue.run(
          this.redis,
          [
            ...this.#movingNames(),
            this.names.record(key),
            this.names.record(live === "" ? key : live),
            this.names.reopened,
            this.names.outboxOn,
            this.names.outbox,
          ],
          [key, live, nowArgument(this.clock)],
        ),
      );
      if (result !== "stale") return result;
    }
    throw new ExternalIdIndexBusyError(
      `retry of ${key}: the external-id index kept changing; run retry again`,
    );
  }

  /**
   * The deployment-wide names a status move touches, as register.lua and requeue.lua take them in
   * KEYS[1..7]: counts, failed, requeuing, pending, ingesting, completed, external-ids.
   */
  #movingNames(): string[] {
    const n = this.names;
    return [n.counts, n.failed, n.requeuing, n.pending, n.ingesting, n.completed, n.externalIds];
  }

  /** The batches that have the key, the first one first ([] if it has no record). */
  async batchesOf(key: string): Promise<readonly string[]> {
    return (await this.get(key))?.batches ?? [];
  }

  /** The idempotency key that carries this external_id now (its newest version), if any. */
  async keyOfExternalId(externalId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.names.externalIds, externalId)) ?? undefined;
  }

  /** Keys requeued by `retry` whose job may not exist yet (see LedgerNames.requeuing). */
  async requeuingKeys(): Promise<string[]> {
    return this.redis.smembers(this.names.requeuing);
  }

  /** The key's job exists (or it needs none): it is no longer in `requeuingKeys`. */
  async requeued(key: string): Promise<void> {
    await this.redis.srem(this.names.requeuing, key);
  }

  async failedKeys(): Promise<string[]> {
    return this.redis.smembers(this.names.failed);
  }

  async counts(): Promise<Record<KeyStatus, number>> {
    const raw = await this.redis.hgetall(this.names.counts);
    const counts = { queued: 0, retrying: 0, succeeded: 0, failed: 0, superseded: 0 };
    for (const status of KEY_STATUSES) counts[status] = Math.max(0, Number(raw[status] ?? 0));
    return counts;
  }
}

/** The keys packed in a batch's key list (16 bytes each), as UUID strings. */
export function unpackKeys(packed: Buffer): string[] {
  const keys: string[] = [];
  for (let at = 0; at + 16 <= packed.length; at += 16) keys.push(uuidString(packed.subarray(at, at + 16)));
  return keys;
}

/** A prefix is matched literally: a QUEUE_PREFIX holding `*`, `?` or `[` must not widen the pattern. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
