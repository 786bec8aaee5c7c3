import { z } from "zod";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const refusalSchema = z.object({
  httpStatus: z.number(),
  detail: z.string(),
  at: z.number(),
  /** Where the refused process read its key (src/config/api-key-setting.ts): what to fix. */
  setting: z.string().optional(),
});
export type ApiKeyRefusal = z.infer<typeof refusalSchema>;

/**
 * The service's refusal of the API key, kept until a process with (presumably) another key starts: what
 * `run` and `status` say about it. Never the key itself: only its HTTP status, the service's words, when, and the setting it came from.
 */
export class ApiKeyRefusals {
  readonly #name: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.#name = new LedgerNames(prefix).apiKeyRefused;
  }

  /**
   * Keeps the first refusal until it is cleared; whether this one was that first (SET NX), so of several
   * workers refused at once exactly one announces it.
   */
  async record(refusal: ApiKeyRefusal): Promise<boolean> {
    return (await this.redis.set(this.#name, JSON.stringify(refusal), "NX")) === "OK";
  }

  async read(): Promise<ApiKeyRefusal | undefined> {
    const raw = await this.redis.get(this.#name);
    if (raw === null) return undefined;
    const parsed = refusalSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }

  /** Whether there was one to clear. */
  async clear(): Promise<boolean> {
    return (await this.redis.del(this.#name)) > 0;
  }
}
