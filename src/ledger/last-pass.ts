import { z } from "zod";
import { LedgerNames } from "./names.js";
import type { RedisClient } from "./redis-client.js";

const lastPassSchema = z.object({
  /** Epoch ms at which the pass ended. */
  endedAt: z.number().int().nonnegative(),
  exitCode: z.number().int().nonnegative(),
});
export type LastPass = z.infer<typeof lastPassSchema>;

/** The latest nightly pass's end and exit code, written by `run`, read by every process's /metrics. */
export class LastPasses {
  readonly #name: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.#name = new LedgerNames(prefix).lastPass;
  }

  async record(pass: LastPass): Promise<void> {
    await this.redis.set(this.#name, JSON.stringify(lastPassSchema.parse(pass)));
  }

  /** Undefined when no pass has recorded one, or what is there is not a pass's record. */
  async read(): Promise<LastPass | undefined> {
    const raw = await this.redis.get(this.#name);
    if (raw === null) return undefined;
    const parsed = lastPassSchema.safeParse(parseJson(raw));
    return parsed.success ? parsed.data : undefined;
  }
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
