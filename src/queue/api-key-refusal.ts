import type { Queue } from "bullmq";
import { z } from "zod";
import { LedgerNames } from "../ledger/names.js";
import type { RedisClient } from "../ledger/redis-client.js";

const refusalSchema = z.object({ httpStatus: z.number(), detail: z.string(), at: z.number() });
export type ApiKeyRefusal = z.infer<typeof refusalSchema>;

/**
 * A refused API key stops all submission: the queue is paused for every worker, and the refusal is
 * recorded so `run` and `status` can say why. A later start with a working key clears both.
 */
export async function recordApiKeyRefused(
  redis: RedisClient,
  queue: Queue,
  prefix: string,
  refusal: ApiKeyRefusal,
): Promise<void> {
  await queue.pause();
  await redis.set(new LedgerNames(prefix).apiKeyRefused, JSON.stringify(refusal));
}

export async function readApiKeyRefusal(
  redis: RedisClient,
  prefix: string,
): Promise<ApiKeyRefusal | undefined> {
  const raw = await redis.get(new LedgerNames(prefix).apiKeyRefused);
  if (raw === null) return undefined;
  const parsed = refusalSchema.safeParse(JSON.parse(raw));
  return parsed.success ? parsed.data : undefined;
}

/** Resumes a queue paused for a refused key; the caller has a (presumably new) key to try. */
export async function clearApiKeyRefusal(redis: RedisClient, queue: Queue, prefix: string): Promise<boolean> {
  const removed = await redis.del(new LedgerNames(prefix).apiKeyRefused);
  if (removed > 0) await queue.resume();
  return removed > 0;
}
