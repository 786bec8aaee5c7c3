import { z } from "zod";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";
import { LedgerReplyError } from "./errors/ledger-reply-error.js";

/** What the outbox still holds: events not exported to PostgreSQL yet (exported ones are deleted). */
export interface OutboxBacklog {
  /** Entries in the stream. */
  readonly entries: number;
  /** The oldest entry, or undefined when the outbox is empty. */
  readonly oldest: { readonly id: string; readonly at: number } | undefined;
}

/** A stream entry id `ms-seq` as numbers: ids compare as (ms, seq). */
export interface StreamId {
  readonly ms: number;
  readonly seq: number;
}

const streamIdPattern = /^(\d+)-(\d+)$/;

export function parseStreamId(id: string): StreamId {
  const match = streamIdPattern.exec(id);
  if (match === null) throw new LedgerReplyError(`not a stream entry id: ${id}`);
  return { ms: Number(match[1]), seq: Number(match[2]) };
}

const rangeReply = z.array(z.tuple([z.string(), z.array(z.string())]));

/** Reads the outbox's length and its oldest entry (two O(1) reads). */
export async function outboxBacklog(redis: RedisClient, prefix: string): Promise<OutboxBacklog> {
  const key = new LedgerNames(prefix).outbox;
  const [entries, first] = await Promise.all([redis.xlen(key), redis.xrange(key, "-", "+", "COUNT", 1)]);
  const oldest = rangeReply.parse(first)[0];
  return {
    entries,
    oldest: oldest === undefined ? undefined : { id: oldest[0], at: parseStreamId(oldest[0]).ms },
  };
}

/** Redis' own clock, in ms: the clock stream entry ids are made of. */
export async function redisTimeMs(redis: RedisClient): Promise<number> {
  const [seconds, micros] = z.tuple([z.coerce.number(), z.coerce.number()]).parse(await redis.time());
  return seconds * 1000 + Math.floor(micros / 1000);
}

/**
 * Keeps an outbox event PostgreSQL refused (or that could not be read) in the `outbox-refused` stream,
 * with its original id and the reason; the caller acknowledges it in the outbox only after this.
 */
export async function keepRefusedEvent(
  redis: RedisClient,
  prefix: string,
  refused: { readonly id: string; readonly fields: readonly string[]; readonly problem: string },
): Promise<void> {
  await redis.xadd(
    new LedgerNames(prefix).outboxRefused,
    "*",
    "id",
    refused.id,
    "problem",
    refused.problem,
    ...refused.fields,
  );
}

/** How many refused events are kept aside (`status`). */
export async function refusedEventCount(redis: RedisClient, prefix: string): Promise<number> {
  return redis.xlen(new LedgerNames(prefix).outboxRefused);
}
