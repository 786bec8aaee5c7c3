import type { Queue } from "bullmq";
import { ApiKeyRefusals, type ApiKeyRefusal } from "../ledger/api-key-refusals.js";
import type { RedisClient } from "../ledger/redis-client.js";

export type { ApiKeyRefusal } from "../ledger/api-key-refusals.js";

/**
 * A refused API key stops all submission: the queue is paused for every worker, and the refusal is
 * recorded so `run` and `status` can say why. A later start with a working key clears both. Whether
 * this was the first record of the refusal (the one to announce it).
 */
export async function recordApiKeyRefused(
  redis: RedisClient,
  queue: Queue,
  prefix: string,
  refusal: ApiKeyRefusal,
): Promise<boolean> {
  await queue.pause();
  return new ApiKeyRefusals(redis, prefix).record(refusal);
}

export async function readApiKeyRefusal(
  redis: RedisClient,
  prefix: string,
): Promise<ApiKeyRefusal | undefined> {
  return new ApiKeyRefusals(redis, prefix).read();
}

/** Resumes a queue paused for a refused key; the caller has a (presumably new) key to try. */
export async function clearApiKeyRefusal(redis: RedisClient, queue: Queue, prefix: string): Promise<boolean> {
  const removed = await new ApiKeyRefusals(redis, prefix).clear();
  if (removed) await queue.resume();
  return removed;
}
