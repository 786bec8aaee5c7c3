import type { Queue } from "bullmq";
import { z } from "zod";
import { LedgerKeys } from "../ledger/key-names.js";
import type { RedisClient } from "../ledger/redis-client.js";

const refusalSchema = z.object({ httpStatus: z.number(), detail: z.string(), at: z.number() });
export type KeyRefusal = z.infer<typeof refusalSchema>;

/**
 * A refused API key stops all submission: the queue is paused for every worker, and the refusal is
 * recorded so `run` and `status` can say why. A later start with a working key clears both.
 */
export async function recordKeyRefused(
  redis: RedisClient,
  queue: Queue,
  prefix: string,
  refusal: KeyRefusal,
): Promise<void> {
  await queue.pause();
  await redis.set(new LedgerKeys(prefix).apiKeyRefused, JSON.stringify(refusal));
}

export async function readKeyRefusal(redis: RedisClient, prefix: string): Promise<KeyRefusal | undefined> {
  const raw = await redis.get(new LedgerKeys(prefix).apiKeyRefused);
  if (raw === null) return undefined;
  const parsed = refusalSchema.safeParse(JSON.parse(raw));
  return parsed.success ? parsed.data : undefined;
}

/** Resumes a queue paused for a refused key; the caller has a (presumably new) key to try. */
export async function clearKeyRefusal(redis: RedisClient, queue: Queue, prefix: string): Promise<boolean> {
  const removed = await redis.del(new LedgerKeys(prefix).apiKeyRefused);
  if (removed > 0) await queue.resume();
  return removed > 0;
}
